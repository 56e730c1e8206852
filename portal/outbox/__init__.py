"""The email engine. It never imports Flask or any area: the web app and the worker call it with
their handles (a database, Redis, settings, the provider and the registered families).

What an area needs:
- `Family` to declare its emails (in `<area>/emails.py`, listed in `portal/email_families.py`);
- `EmailIntent` and `write_then_publish` to write rows and their emails in one transaction;
- the read functions in `portal.outbox.reads` to show email state.
"""

from portal.outbox.families import Family
from portal.outbox.intents import EmailIntent
from portal.outbox.unit_of_work import EmailWork, write_then_publish

__all__ = ["EmailIntent", "EmailWork", "Family", "write_then_publish"]
