"""What the engine holds about one email address, and erasing it (GDPR articles 15 and 17).

The engine's tables hold an address in four places: outbox rows (`recipient`, and the template input
that may name the person), frozen payloads (the rendered email), receipts (their kept fields: the
address, and an IP and user agent for a click) and the suppression list with its history. An area
that answers a person's request reads them here (`emails_to`) and erases them here
(`erase_address`), inside its own transaction, so the engine's tables change with the area's.

Erasure keeps what the record needs and nothing that names the person: an outbox row keeps its
family, status, key and times, with the pseudonym the caller chooses as its recipient. A suppression
must go on being honoured (the address bounced, or complained), so its entry keeps the address only
as a keyed hash (`ERASED_PREFIX` + HMAC-SHA256 under the portal's secret key): when someone gives
the portal the same address again, `add_outbox_rows` finds the hash and puts the plain entry back
before the new email is written, and the claim refuses it as before. Rotating SECRET_KEY makes the
hashed entries unmatchable; docs/deploy.md says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa

from portal.core import clock
from portal.core.db import json_array
from portal.core.driver import Statement
from portal.core.text import normalise_email
from portal.outbox.ground.erased import address_hash
from portal.outbox.ground.rows import ERASE_ABOUT, ERASE_ROWS, FORGET_NAMED
from portal.outbox.ground.statuses import UNSETTLED, among_named, sql_list

_EMAILS_TO = Statement(
    """
    SELECT id, family, status, attempt_count, provider_message_id, created_at, first_attempt_at, sent_at,
           last_event_at, updated_at
    FROM email_outbox WHERE recipient = :address ORDER BY created_at, id
    """
)
# The receipts of those emails, and any other receipt whose kept fields name the address (about an
# email erased before receipts about erased emails were kept without it, or about none of ours).
_RECEIPTS_OF = Statement(
    """
    SELECT id, outbox_id, type, event_created_at, received_at, outcome, payload
    FROM email_receipts WHERE outbox_id IN (SELECT value FROM json_each(:ids))
    UNION
    SELECT id, outbox_id, type, event_created_at, received_at, outcome, payload
    FROM email_receipts WHERE payload IS NOT NULL AND payload ->> '$.to' = :address
    ORDER BY id
    """
)
_SUPPRESSION = Statement("SELECT email, reason, source, created_at FROM email_suppressions WHERE email = :address")
_SUPPRESSION_HISTORY = Statement(
    "SELECT action, reason, source, created_at FROM email_suppression_events WHERE email = :address ORDER BY id"
)
_UNSETTLED_ABOUT_CONDITION = among_named(f"status IN {sql_list(UNSETTLED)}", column="subject_ref", names=":about")
_IN_FLIGHT = Statement(
    f"""
    SELECT (SELECT COUNT(*) FROM email_outbox WHERE recipient = :address AND status IN {sql_list(UNSETTLED)})
         + (SELECT COUNT(*) FROM email_outbox WHERE {_UNSETTLED_ABOUT_CONDITION})
    """
)
_UNSETTLED_ABOUT = Statement(f"SELECT id FROM email_outbox WHERE {_UNSETTLED_ABOUT_CONDITION}")
_DELETE_PAYLOADS = Statement("DELETE FROM email_frozen_payloads WHERE outbox_id IN (SELECT value FROM json_each(:ids))")
_FORGET_RECEIPT_FIELDS = Statement(
    "UPDATE email_receipts SET payload = NULL WHERE outbox_id IN (SELECT value FROM json_each(:ids))"
)
_FORGET_RECEIPTS_NAMING = Statement(
    "UPDATE email_receipts SET payload = NULL WHERE payload IS NOT NULL AND payload ->> '$.to' = :address"
)
# OR REPLACE: an address erased before, suppressed again under itself since (written to again, or
# a receipt from before hashes), already has its hashed entry; the newer entry replaces it.
_HASH_SUPPRESSION = Statement("UPDATE OR REPLACE email_suppressions SET email = :hashed WHERE email = :address")
_HASH_SUPPRESSION_HISTORY = Statement("UPDATE email_suppression_events SET email = :hashed WHERE email = :address")
# A difference the suppression lists' comparison found for the address (suppression_comparison.py).
_HASH_SUPPRESSION_DIFFERENCE = Statement(
    "UPDATE OR REPLACE email_suppression_differences SET email = :hashed WHERE email = :address"
)


class EmailsInFlight(Exception):
    """Emails to the address are being handed to the provider now; erase once they settle."""

    def __init__(self, count: int):
        super().__init__(f"{count} email(s) to this address are being sent right now")
        self.count = count


@dataclass(frozen=True)
class Erased:
    emails: int
    suppression_entries: int


def emails_to(conn: sa.Connection, address: str) -> dict[str, list[dict]]:
    """Every email to the address (no content: a template input may name other people), the receipts
    of those emails, and the address's suppression entry and history."""
    params = {"address": normalise_email(address)}
    emails = [dict(row) for row in _EMAILS_TO(conn, params).mappings().all()]
    receipts = [
        {
            **{key: value for key, value in row.items() if key != "id"},
            "payload": json.loads(row["payload"]) if row["payload"] else None,
        }
        for row in _RECEIPTS_OF(conn, {**params, "ids": json_array(email["id"] for email in emails)}).mappings().all()
    ]
    return {
        "emails": emails,
        "receipts": receipts,
        "suppressions": [dict(row) for row in _SUPPRESSION(conn, params).mappings().all()],
        "suppression_history": [dict(row) for row in _SUPPRESSION_HISTORY(conn, params).mappings().all()],
    }


def unsettled_about(conn: sa.Connection, subject_refs: list[str]) -> list[str]:
    """Rows about these domain rows that have not settled (for cancel_unsent before an erasure)."""
    return list(_UNSETTLED_ABOUT(conn, {"about": json_array(subject_refs)}).scalars())


def forget_name_in_emails(
    conn: sa.Connection, *, about: list[str], field: str, stand_ins: dict[str, str], kept: list[str], now: datetime
) -> int:
    """Inside an erasure's transaction: emails to others `about` these domain rows (subject_refs) that
    name the erased person in `field` of their input (the inviter of an invitation they sent) name a
    stand-in instead, in each email's language; values in `kept` (stand-ins already) stay. Returns how
    many emails changed. An email not yet sent goes out with the stand-in."""
    params = {
        "about": json_array(about),
        "field": field,
        "stand_ins": json.dumps(stand_ins),
        "kept": json_array(kept),
        "now": clock.iso(now),
    }
    return len(FORGET_NAMED(conn, params).all())


def erase_address(
    conn: sa.Connection, address: str, *, about: list[str], pseudonym: str, secret_key: str, now: datetime
) -> Erased:
    """Inside the caller's transaction, after cancel_unsent: erase the address from every email table,
    and what the person wrote from emails to others `about` their rows (subject_refs).

    Raises EmailsInFlight while a delivery still holds one of those emails (a row asked to stop
    settles within a claim; a member of a sealed batch needs its payload for the batch's retries)."""
    address = normalise_email(address)
    in_flight = _IN_FLIGHT(conn, {"address": address, "about": json_array(about)}).scalar()
    if in_flight:
        raise EmailsInFlight(in_flight)
    now_text = clock.iso(now)
    ids = list(ERASE_ROWS(conn, {"address": address, "pseudonym": pseudonym, "now": now_text}).scalars())
    ids += ERASE_ABOUT(conn, {"about": json_array(about), "now": now_text}).scalars()
    id_list = {"ids": json_array(ids)}
    _DELETE_PAYLOADS(conn, id_list)
    _FORGET_RECEIPT_FIELDS(conn, id_list)
    _FORGET_RECEIPTS_NAMING(conn, {"address": address})
    hashed = {"address": address, "hashed": address_hash(address, secret_key)}
    suppressed = _HASH_SUPPRESSION(conn, hashed).rowcount
    _HASH_SUPPRESSION_HISTORY(conn, hashed)
    _HASH_SUPPRESSION_DIFFERENCE(conn, hashed)
    return Erased(emails=len(ids), suppression_entries=suppressed)
