"""How areas read email state: by the domain row an email is about, by row ID or by key.

Areas never query the email tables themselves; these functions are the engine's read side.
"""

from __future__ import annotations

import sqlalchemy as sa

from portal.core.db import Database, json_array
from portal.outbox.ground.statuses import BOUNCED, UNSETTLED, sql_list
from portal.outbox.operate.personal_data import emails_to

# The reads face: how areas show email state (portal.outbox.FACES).
__all__ = [
    "emails_to",
    "family_status_counts",
    "id_by_key",
    "ids_for_subject",
    "latest_status",
    "latest_statuses",
    "receipt_counts",
    "status_by_key",
    "status_counts",
    "status_counts_for_subject",
    "statuses_by_id",
    "suppressed_among",
    "unsettled_ids_for_recipient",
]

_LATEST_FOR_SUBJECTS = sa.text(
    """
    SELECT subject_ref, status FROM (
        SELECT subject_ref, status,
               ROW_NUMBER() OVER (PARTITION BY subject_ref ORDER BY created_at DESC, rowid DESC) AS newest
        FROM email_outbox WHERE subject_ref IN (SELECT value FROM json_each(:refs)))
    WHERE newest = 1
    """
)


def latest_status(conn: sa.Connection, subject_ref: str) -> str | None:
    """The status of the newest email about one domain row, inside the caller's transaction."""
    return latest_statuses(conn, [subject_ref]).get(subject_ref)


def latest_statuses(conn: sa.Connection, subject_refs: list[str]) -> dict[str, str]:
    """{subject_ref: status of its newest email}; refs with no email are left out."""
    if not subject_refs:
        return {}
    return dict(conn.execute(_LATEST_FOR_SUBJECTS, {"refs": json_array(subject_refs)}).all())


def statuses_by_id(conn: sa.Connection, outbox_ids: list[str]) -> dict[str, str]:
    ids = [i for i in outbox_ids if i]
    if not ids:
        return {}
    return dict(
        conn.execute(
            sa.text("SELECT id, status FROM email_outbox WHERE id IN (SELECT value FROM json_each(:ids))"),
            {"ids": json_array(ids)},
        ).all()
    )


def id_by_key(conn: sa.Connection, idempotency_key: str) -> str | None:
    return conn.execute(
        sa.text("SELECT id FROM email_outbox WHERE idempotency_key = :k"), {"k": idempotency_key}
    ).scalar()


def status_by_key(conn: sa.Connection, idempotency_key: str) -> str | None:
    return conn.execute(
        sa.text("SELECT status FROM email_outbox WHERE idempotency_key = :k"), {"k": idempotency_key}
    ).scalar()


def suppressed_among(conn: sa.Connection, emails: list[str]) -> set[str]:
    """Which of these (lower-case) addresses are on the suppression list."""
    if not emails:
        return set()
    return set(
        conn.execute(
            sa.text("SELECT email FROM email_suppressions WHERE email IN (SELECT value FROM json_each(:emails))"),
            {"emails": json_array(emails)},
        ).scalars()
    )


def unsettled_ids_for_recipient(conn: sa.Connection, email: str) -> list[str]:
    """Rows to this address that have not settled (for cancel_unsent, which keeps those that may have gone out)."""
    return list(
        conn.execute(
            sa.text(f"SELECT id FROM email_outbox WHERE recipient = :email AND status IN {sql_list(UNSETTLED)}"),
            {"email": email},
        ).scalars()
    )


def ids_for_subject(conn: sa.Connection, subject_ref: str) -> list[str]:
    """Every outbox row about one domain row (e.g. a campaign's recipients), oldest first."""
    return list(
        conn.execute(
            sa.text("SELECT id FROM email_outbox WHERE subject_ref = :ref ORDER BY created_at, rowid"),
            {"ref": subject_ref},
        ).scalars()
    )


def status_counts_for_subject(conn: sa.Connection, subject_ref: str) -> dict[str, int]:
    """{status: rows} of the outbox rows about one domain row."""
    return dict(
        conn.execute(
            sa.text("SELECT status, COUNT(*) FROM email_outbox WHERE subject_ref = :ref GROUP BY status"),
            {"ref": subject_ref},
        ).all()
    )


# A bounced email counts once, in the class of its latest bounce receipt that has one (receipts from
# before 0046 have none, and are not counted here).
_BOUNCE_CLASSES_FOR_SUBJECT = sa.text(
    f"""
    SELECT bounce_class, COUNT(*) FROM (
        SELECT (SELECT r.bounce_class FROM email_receipts r
                WHERE r.outbox_id = o.id AND r.bounce_class IS NOT NULL
                ORDER BY r.event_created_at DESC, r.id DESC LIMIT 1) AS bounce_class
        FROM email_outbox o WHERE o.subject_ref = :ref AND o.status = '{BOUNCED}'
    ) WHERE bounce_class IS NOT NULL GROUP BY bounce_class
    """
)


def bounce_class_counts_for_subject(conn: sa.Connection, subject_ref: str) -> dict[str, int]:
    """{bounce class: emails} of the bounced outbox rows about one domain row (ground/bounce_classes.py)."""
    return dict(conn.execute(_BOUNCE_CLASSES_FOR_SUBJECT, {"ref": subject_ref}).all())


# Read by `flask outbox status`, the console's grid and every /metrics scrape: a scan of the
# (family, status, created_at, id) index alone, never of the table (0016).
ROWS_BY_FAMILY_AND_STATUS = sa.text(
    "SELECT family, status, COUNT(*) FROM email_outbox GROUP BY family, status ORDER BY family, status"
)


def family_status_counts(conn: sa.Connection) -> dict[tuple[str, str], int]:
    """{(family, status): rows}, ordered by family then status; pairs with no row are left out."""
    return {(family, status): count for family, status, count in conn.execute(ROWS_BY_FAMILY_AND_STATUS)}


def status_counts(db: Database) -> list[dict]:
    """Rows by family and status, for `flask outbox status`."""
    with db.read() as conn:
        counts = family_status_counts(conn)
    return [{"family": family, "status": status, "count": count} for (family, status), count in counts.items()]


def receipt_counts(db: Database) -> dict[str, int]:
    """Receipts by outcome (other_environment is the skipped-and-counted one)."""
    with db.read() as conn:
        rows = conn.execute(
            sa.text("SELECT COALESCE(outcome, 'unprocessed'), COUNT(*) FROM email_receipts GROUP BY 1 ORDER BY 1")
        ).all()
    return dict(rows)
