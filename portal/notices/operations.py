"""Sending a notice by hand, from a Flask shell:

>>> from portal.notices.operations import send_notice
>>> send_notice(app.extensions["portal"], to="someone@example.org", subject="Hello",
...             body="First paragraph.\\n\\nSecond.")

The operator writes the subject and body in the language they choose; the layout around them (the
header and footer) is in the recipient's reading language (their own choice, else their company's,
else English), stored with the intent.
"""

from __future__ import annotations

import uuid

from portal.auth import reading_language
from portal.core import clock
from portal.notices.emails import NOTICE
from portal.outbox import EmailIntent, write_then_publish


def send_notice(ctx, *, to: str, subject: str, body: str, key: str | None = None) -> bool:
    """Write the notice's intent and publish it; returns whether it reached the queue now."""
    with write_then_publish(ctx, now=clock.utcnow()) as work:
        work.add(
            EmailIntent(
                family=NOTICE,
                recipient=to,
                idempotency_key=key or f"notice:{uuid.uuid4().hex}",
                data={"subject": subject, "body": body, "language": reading_language(work.conn, to)},
            )
        )
    return work.queued
