"""The email engine. It never imports Flask: the web app and the worker both call these functions
with a database handle and settings.

Domain code needs three things: `EmailIntent`, `add_outbox_rows` (inside its own transaction) and
`publish_outbox_rows` (after the commit).
"""
from portal.outbox.intents import EmailIntent, add_outbox_rows
from portal.outbox.publish import PublishResult, publish_outbox_rows

__all__ = ["EmailIntent", "add_outbox_rows", "publish_outbox_rows", "PublishResult"]
