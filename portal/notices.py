"""Plain notices from the portal team, e.g. typed into a Flask shell by an operator:

    >>> from portal.notices import send_notice
    >>> send_notice(app, to="someone@example.org", subject="Hello", body="First paragraph.\\n\\nSecond.")
"""
from __future__ import annotations

import uuid

from portal.outbox import EmailIntent, PublishResult, add_outbox_rows, publish_outbox_rows


def send_notice(app, *, to: str, subject: str, body: str, key: str | None = None) -> PublishResult:
    services = app.extensions["portal"]
    intent = EmailIntent(
        family="notice",
        recipient=to,
        idempotency_key=key or f"notice:{uuid.uuid4().hex}",
        data={"subject": subject, "body": body},
    )
    with services.db.write() as conn:
        ids = add_outbox_rows(conn, [intent], services.settings)
    return publish_outbox_rows(services.db, services.redis, ids)
