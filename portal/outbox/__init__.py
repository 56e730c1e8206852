"""The email engine. It never imports Flask or any area: the web app and the worker call it with
their handles (`PortalContext`: a database, Redis, settings, the provider and the registered families).

Everything above the engine reaches it through its faces, named in `FACES` and nowhere else:
- this module, for an area's emails: `Family` to declare them (in `<area>/emails.py`, listed in
  `portal/email_families.py`), `EmailIntent` and `write_then_publish` to write rows and their
  emails in one transaction (or `write_steps_then_publish` with `portal.core.driver.Steps` and `WrittenWith`,
  a write given whole), `PeriodicTask` for a scheduled pass, `erase_address` (and
  `forget_name_in_emails`) for a person's erasure, `cancel_and_count` to stop emails and say which may still go out;
- `portal.outbox.operate.reads` to show email state, and `portal.outbox.ground.statuses` to name it;
- `portal.outbox.operate.operator` for the console, the suppression list, the CLI and /metrics;
- `portal.outbox.hear.receipts` for the provider's delivery receipts.
"""

from portal.outbox.ground.families import BROADCAST, TRANSACTIONAL, Family, FamilyRegistry
from portal.outbox.ground.handles import PortalContext
from portal.outbox.ground.periodic import PeriodicTask
from portal.outbox.ground.queues import BULK_EMAIL_QUEUE, EMAIL_QUEUE
from portal.outbox.ground.rendering import Attachment
from portal.outbox.ground.retry import RetryPolicy
from portal.outbox.ground.rows import Cancellation, cancel_and_count, cancel_unsent
from portal.outbox.operate.personal_data import (
    EmailsInFlight,
    erase_address,
    forget_name_in_emails,
    unsettled_about,
)
from portal.outbox.write.intents import EmailIntent, WrittenWith
from portal.outbox.write.unit_of_work import EmailWork, write_steps_then_publish, write_then_publish

FACES = (
    "portal.outbox",
    "portal.outbox.operate.reads",
    "portal.outbox.ground.statuses",
    "portal.outbox.operate.operator",
    "portal.outbox.hear.receipts",
)

__all__ = [
    "BROADCAST",
    "BULK_EMAIL_QUEUE",
    "EMAIL_QUEUE",
    "FACES",
    "Attachment",
    "Cancellation",
    "EmailIntent",
    "EmailWork",
    "EmailsInFlight",
    "Family",
    "FamilyRegistry",
    "PeriodicTask",
    "PortalContext",
    "RetryPolicy",
    "TRANSACTIONAL",
    "WrittenWith",
    "cancel_and_count",
    "cancel_unsent",
    "erase_address",
    "forget_name_in_emails",
    "unsettled_about",
    "write_steps_then_publish",
    "write_then_publish",
]
