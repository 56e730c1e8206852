"""An erased address on the suppression list: it survives as a keyed hash, so a bounce or a
complaint still holds after an erasure, and an email written to the address again restores it
under the address itself, in the same write (intents.py).
"""

from __future__ import annotations

import json

import sqlalchemy as sa

from portal.core.driver import Statement
from portal.core.pseudonyms import ERASED_DOMAIN, ERASED_PREFIX, address_hash

__all__ = ["ERASED_PREFIX", "ERASED_ROW", "RESTORE_SUPPRESSIONS", "address_hash", "restore_erased_suppressions"]

# An outbox row that no longer holds its address: a person's erasure gave it a pseudonym, or the
# retention rule blanked it (rows.ERASED_RECIPIENT). A receipt about it names an address the portal
# erased: it is stored without it (receipts.py), and a bounce or complaint suppresses the keyed hash.
ERASED_ROW = f"(recipient = '' OR recipient LIKE '%@{ERASED_DOMAIN}')"

# A hashed entry comes back as a plain one when its address is written again (see the docstring).
RESTORE_SUPPRESSIONS = Statement(
    """
    INSERT OR IGNORE INTO email_suppressions (email, reason, source, created_at)
    SELECT json_each.value ->> '$[0]', s.reason, s.source, s.created_at
    FROM json_each(:pairs) JOIN email_suppressions s ON s.email = json_each.value ->> '$[1]'
    """
)


def restore_erased_suppressions(conn: sa.Connection, recipients: list[str], secret_key: str) -> None:
    """Before emails to `recipients` are written: an erased address that was suppressed is again."""
    pairs = json.dumps([[recipient, address_hash(recipient, secret_key)] for recipient in set(recipients)])
    RESTORE_SUPPRESSIONS(conn, {"pairs": pairs})
