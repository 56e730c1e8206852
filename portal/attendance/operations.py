"""Attendance writes: a signed delivery, an import batch, a user moving company. One db.write() each.

How a record applies (the same for the API and an import):

- A session is (platform, session_id, volunteer address). A record whose updated_at is later than
  the stored one replaces it whole; one that is not later (older, or the same version again)
  changes nothing and is counted `stale`.
- The volunteer is matched by address (lower-cased) to an account; the session's company is the
  one the volunteer belonged to when it was held (see memberships.py). An address without an
  account is stored with no user and no company (`unmatched`) and attached when the account is
  created.
- Only `attended` minutes count; `cancelled` and `no_show` rows stay stored, so a later correction
  can still be ordered against them.
- A record for an erased address (portal/core/pseudonyms.py: its keyed hash is recorded, and no
  account holds the address again) is written under the pseudonym, with its session ID keyed as
  the erasure keyed the person's sessions: a correction reaches the pseudonymised, counted session,
  and the address is stored nowhere again.

Counts: received = applied + stale; unmatched counts the applied records that wait for an account.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa

from portal.attendance.memberships import company_at, end_membership, reattribute_sessions, start_membership
from portal.attendance.validation import SessionRecord
from portal.core import clock
from portal.core.db import Database, json_array
from portal.core.pseudonyms import pseudonyms_of, session_key

API, IMPORT = "api", "import"


@dataclass(frozen=True)
class Counts:
    received: int = 0
    applied: int = 0
    unmatched: int = 0
    stale: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            self.received + other.received,
            self.applied + other.applied,
            self.unmatched + other.unmatched,
            self.stale + other.stale,
        )

    def as_dict(self) -> dict[str, int]:
        return {"received": self.received, "applied": self.applied, "unmatched": self.unmatched, "stale": self.stale}


# The batch is bound as one JSON parameter: one statement for up to a thousand records.
# WHERE true: SQLite needs it between a SELECT and ON CONFLICT. RETURNING yields the rows that
# were inserted or replaced; a record the conflict's WHERE refused is not returned (stale).
# The order of records, within a batch or across requests, does not decide the outcome: the latest
# updated_at wins, and two versions with the same updated_at are ranked the same way wherever they
# arrive: the one that counts less (cancelled, then no-show, then attended; then fewer minutes), so
# a tie never overstates verified hours. An identical replay ranks equal and stays stale.
_VERSION = (
    "({t}.updated_at, CASE {t}.status WHEN 'cancelled' THEN 2 WHEN 'no_show' THEN 1 ELSE 0 END, "
    "-{t}.minutes, {t}.held_at)"
)
_UPSERT = sa.text(f"""
    INSERT INTO attendance_sessions (platform, session_id, volunteer_email, user_id, company_id, held_at,
                                     minutes, status, updated_at, received_at, source, own_time)
    SELECT r.platform, r.session_id, r.email, r.user_id, {company_at("r.user_id", "r.held_at")},
           r.held_at, r.minutes, r.status, r.updated_at, :now, :source, r.own_time
    FROM (SELECT json_extract(j.value, '$[0]') AS platform, json_extract(j.value, '$[1]') AS session_id,
                 json_extract(j.value, '$[2]') AS email, json_extract(j.value, '$[3]') AS held_at,
                 json_extract(j.value, '$[4]') AS minutes, json_extract(j.value, '$[5]') AS status,
                 json_extract(j.value, '$[6]') AS updated_at, json_extract(j.value, '$[7]') AS own_time,
                 (SELECT u.id FROM users u WHERE u.email = json_extract(j.value, '$[2]')) AS user_id
          FROM json_each(:batch) j) r
    WHERE true
    ON CONFLICT (platform, session_id, volunteer_email) DO UPDATE
      SET user_id = excluded.user_id, company_id = excluded.company_id, held_at = excluded.held_at,
          minutes = excluded.minutes, status = excluded.status, updated_at = excluded.updated_at,
          received_at = excluded.received_at, source = excluded.source, own_time = excluded.own_time
      WHERE {_VERSION.format(t="excluded")} > {_VERSION.format(t="attendance_sessions")}
    RETURNING user_id
""")

_CLAIM_DELIVERY = sa.text("""
    INSERT INTO attendance_deliveries (webhook_id, received_at, received, applied, unmatched, stale, body_sha256)
    VALUES (:webhook_id, :now, 0, 0, 0, 0, :digest)
    ON CONFLICT (webhook_id) DO NOTHING
""")
_DELIVERY_COUNTS = sa.text(
    "SELECT received, applied, unmatched, stale, body_sha256 FROM attendance_deliveries WHERE webhook_id = :webhook_id"
)
_RECORD_COUNTS = sa.text("""
    UPDATE attendance_deliveries SET received = :received, applied = :applied, unmatched = :unmatched,
                                     stale = :stale
    WHERE webhook_id = :webhook_id
""")


def apply_sessions(
    conn: sa.Connection, records: Sequence[SessionRecord], *, source: str, now: str, secret_key: str
) -> Counts:
    """Apply validated records inside the caller's transaction; return what happened."""
    if not records:
        return Counts()
    erased = pseudonyms_of(conn, (r.volunteer_email for r in records), secret_key)
    batch = json_array(_as_stored(r, erased.get(r.volunteer_email), secret_key) for r in records)
    returned = conn.execute(_UPSERT, {"batch": batch, "now": now, "source": source}).scalars().all()
    applied = len(returned)
    unmatched = sum(1 for user_id in returned if user_id is None)
    return Counts(received=len(records), applied=applied, unmatched=unmatched, stale=len(records) - applied)


def _as_stored(record: SessionRecord, pseudonym: str | None, secret_key: str) -> list:
    """The record's batch row: as it came, or for an erased address under its pseudonym."""
    row = record.as_row()
    if pseudonym is not None:
        row[1], row[2] = session_key(record.session_id, secret_key), pseudonym
    return row


class DeliveryIdReused(ValueError):
    """A webhook-id already delivered with another body: the platform reused an id (409)."""


def record_delivery(
    db: Database, *, webhook_id: str, body: bytes, records: Sequence[SessionRecord], secret_key: str
) -> tuple[Counts, bool]:
    """A signed API delivery, once per webhook-id: (counts, replayed).

    The delivery row and the sessions commit together. A replayed webhook-id with the same body
    changes nothing and is answered with the counts its first delivery was answered with; with
    another body it raises DeliveryIdReused, so the platform learns its second body was not applied.
    """
    now, digest = clock.now_iso(), hashlib.sha256(body).hexdigest()
    with db.write() as conn:
        if conn.execute(_CLAIM_DELIVERY, {"webhook_id": webhook_id, "now": now, "digest": digest}).rowcount == 0:
            first = conn.execute(_DELIVERY_COUNTS, {"webhook_id": webhook_id}).one()
            if first.body_sha256 is not None and first.body_sha256 != digest:
                raise DeliveryIdReused(webhook_id)
            return Counts(first.received, first.applied, first.unmatched, first.stale), True
        counts = apply_sessions(conn, records, source=API, now=now, secret_key=secret_key)
        conn.execute(_RECORD_COUNTS, {"webhook_id": webhook_id, **counts.as_dict()})
    return counts, False


def import_batch(db: Database, records: Sequence[SessionRecord], *, secret_key: str) -> Counts:
    """One batch of an import file, in one transaction."""
    now = clock.now_iso()
    with db.write() as conn:
        return apply_sessions(conn, records, source=IMPORT, now=now, secret_key=secret_key)


class MembershipError(ValueError):
    """A move that contradicts the membership history; the message is safe to show."""


_CURRENT_MEMBERSHIP = sa.text(
    "SELECT company_id, started_at FROM company_memberships WHERE user_id = :user_id AND ended_at IS NULL"
)


def move_user(db: Database, *, user_id: int, company_id: int, at: str | None = None) -> None:
    """The user leaves their company and joins another at `at` (default now).

    Sessions held before `at` stay with the old company; sessions from `at` on count for the new
    one, including any already stored (a move recorded late).
    """
    at = at or clock.now_iso()
    with db.write() as conn:
        current = conn.execute(_CURRENT_MEMBERSHIP, {"user_id": user_id}).first()
        if current is not None and current.company_id == company_id:
            raise MembershipError("the user already belongs to that company")
        if current is not None and at < current.started_at:
            raise MembershipError("a move cannot be dated before the user joined their current company")
        end_membership(conn, user_id=user_id, at=at)
        start_membership(conn, user_id=user_id, company_id=company_id, at=at)
        conn.execute(
            sa.text("UPDATE users SET company_id = :company_id WHERE id = :user_id"),
            {"company_id": company_id, "user_id": user_id},
        )
        reattribute_sessions(conn, user_id=user_id)
