"""Partner applications: a company applies; an admin approves, declines or asks for more.

Each write is one transaction holding the domain rows and the email intent, published only after
the commit. Replays are harmless: an open application is unique per contact and company, and each
decision is numbered, so a double click finds the row it already wrote and writes nothing.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

import sqlalchemy as sa
from redis import Redis

from portal.auth.service import ensure_company, normalise_email
from portal.db import Database
from portal.invitations.service import InvitationError, insert_invitation
from portal.outbox import EmailIntent, add_outbox_rows, clock, publish_outbox_rows
from portal.settings import Settings

log = logging.getLogger(__name__)

NEW, INFO_REQUESTED, APPROVED, DECLINED = "new", "info_requested", "approved", "declined"
STATES = (NEW, INFO_REQUESTED, APPROVED, DECLINED)
OPEN_STATES = (NEW, INFO_REQUESTED)
STATE_LABELS = {NEW: "New", INFO_REQUESTED: "Information requested", APPROVED: "Approved", DECLINED: "Declined"}
# What each decision moves an application to.
DECISIONS = {"approve": APPROVED, "decline": DECLINED, "request_info": INFO_REQUESTED}
DECISION_LABELS = {"approve": "Approved", "decline": "Declined", "request_info": "Asked for more information"}

NAME_MAX = 200
EMAIL_MAX = 254
MESSAGE_MAX = 2000
NOTE_MAX = 2000
EMPLOYEES_MAX = 10_000_000
LIST_LIMIT = 200


class ApplicationError(ValueError):
    """Bad input for an application operation; the message is safe to show."""


class DecisionRefused(ApplicationError):
    """The application's state refuses this decision; nothing was written."""


class ApplicationNotFound(LookupError):
    pass


# --- writes ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Submission:
    application_id: int
    created: bool      # False: a replay of an open application; nothing was written
    queued: bool       # False: the confirmation is saved but waits for the relay


def submit_application(
    db: Database,
    redis: Redis,
    settings: Settings,
    *,
    company_name: str,
    contact_name: str,
    contact_email: str,
    employee_count: int,
    message: str = "",
) -> Submission:
    """Record an application and its confirmation email in one transaction, then publish."""
    company_name = _one_line(company_name, "company name", NAME_MAX)
    contact_name = _one_line(contact_name, "your name", NAME_MAX)
    contact_email = normalise_email(contact_email or "")
    if "@" not in contact_email or len(contact_email) > EMAIL_MAX:
        raise ApplicationError("Enter an email address like name@company.com.")
    if not isinstance(employee_count, int) or not 1 <= employee_count <= EMPLOYEES_MAX:
        raise ApplicationError("The number of employees must be a whole number of at least 1.")
    message = _text(message, "message", MESSAGE_MAX)

    now = clock.now_iso()
    with db.write() as conn:
        application_id = conn.execute(
            sa.text(
                """
                INSERT INTO company_applications (company_name, company_key, contact_name, contact_email,
                    employee_count, message, state, created_at, updated_at)
                VALUES (:company_name, :company_key, :contact_name, :contact_email, :employee_count,
                    :message, 'new', :now, :now)
                ON CONFLICT DO NOTHING
                RETURNING id
                """
            ),
            {"company_name": company_name, "company_key": company_name.lower(), "contact_name": contact_name,
             "contact_email": contact_email, "employee_count": employee_count, "message": message, "now": now},
        ).scalar()
        if application_id is None:
            # This contact already has an open application for this company: a replay.
            existing = conn.execute(
                sa.text(
                    f"SELECT id FROM company_applications WHERE contact_email = :e AND company_key = :k "
                    f"AND state IN {_sql_list(OPEN_STATES)}"
                ),
                {"e": contact_email, "k": company_name.lower()},
            ).scalar_one()
            return Submission(application_id=existing, created=False, queued=True)
        outbox_ids = add_outbox_rows(
            conn,
            [EmailIntent(
                family="application_received",
                recipient=contact_email,
                idempotency_key=f"application:{application_id}:received",
                data={"contact_name": contact_name, "company_name": company_name,
                      "employee_count": employee_count},
                subject_ref=f"application:{application_id}",
            )],
            settings,
        )
    published = publish_outbox_rows(db, redis, outbox_ids)
    log.info("application %s received", application_id)
    return Submission(application_id=application_id, created=True, queued=published.queued)


@dataclass(frozen=True)
class DecisionOutcome:
    application_id: int
    decision: str
    sequence: int
    company_name: str
    contact_name: str
    replayed: bool     # True: this decision was already recorded; nothing was written now
    queued: bool


def record_decision(
    db: Database,
    redis: Redis,
    settings: Settings,
    *,
    application_id: int,
    decision: str,
    note: str,
    admin_user_id: int,
    decisions_seen: int | None = None,
) -> DecisionOutcome:
    """Record an admin's decision and its email in one transaction, then publish.

    `decisions_seen` is how many decisions the admin's page showed. A request that repeats the
    latest decision it would have made (same decision and note) is a replay: nothing is written.
    A decision taken on a page that is out of date, or on a closed application, is refused.
    Approving creates the company and invites the contact as its first manager, in the same
    transaction, and the decision email carries the invitation's token nonce.
    """
    if decision not in DECISIONS:
        raise ApplicationError("Choose approve, decline or ask for more information.")
    note = _text(note, "note", NOTE_MAX)
    if decision == "request_info" and not note:
        raise ApplicationError("Say what information you need, so the applicant can answer.")

    with db.write() as conn:
        app = conn.execute(
            sa.text("SELECT * FROM company_applications WHERE id = :id"), {"id": application_id}
        ).mappings().first()
        if app is None:
            raise ApplicationNotFound(application_id)
        count = app["decision_count"]
        latest = conn.execute(
            sa.text("SELECT decision, note FROM application_decisions WHERE application_id = :id AND sequence = :n"),
            {"id": application_id, "n": count},
        ).mappings().first()

        def outcome(sequence: int, replayed: bool, queued: bool = True) -> DecisionOutcome:
            return DecisionOutcome(application_id, decision, sequence, app["company_name"], app["contact_name"],
                                   replayed, queued)

        if (latest is not None and latest["decision"] == decision and latest["note"] == note
                and decisions_seen in (None, count - 1)):
            return outcome(count, replayed=True)
        if decisions_seen is not None and decisions_seen != count:
            raise DecisionRefused(
                f"This application changed while you had it open: it is now "
                f"{STATE_LABELS[app['state']].lower()}. Nothing was saved; review it before deciding."
            )
        if app["state"] not in OPEN_STATES:
            raise DecisionRefused(
                f"This application was already {STATE_LABELS[app['state']].lower()}, and that decision is final. "
                "Nothing was saved and no email was sent."
            )

        sequence = count + 1
        data = {"decision": decision, "note": note, "contact_name": app["contact_name"],
                "company_name": app["company_name"]}
        company_id = invitation_id = None
        if decision == "approve":
            company_id = ensure_company(conn, app["company_name"])
            try:
                invitation = insert_invitation(
                    conn, settings, company_id=company_id, email=app["contact_email"], role="manager",
                    programme=None, invited_by=admin_user_id,
                )
            except InvitationError as error:
                raise DecisionRefused(f"{error} Nothing was saved.") from None
            invitation_id = invitation.id
            data["token_nonce"] = invitation.token_nonce
        (outbox_id,) = add_outbox_rows(
            conn,
            [EmailIntent(
                family="application_decision",
                recipient=app["contact_email"],
                idempotency_key=f"application:{application_id}:decision:{sequence}",
                data=data,
                subject_ref=f"application:{application_id}",
            )],
            settings,
        )
        now = clock.now_iso()
        conn.execute(
            sa.text(
                """
                INSERT INTO application_decisions (application_id, sequence, decision, note, decided_by,
                    invitation_id, outbox_id, created_at)
                VALUES (:id, :sequence, :decision, :note, :admin, :invitation_id, :outbox_id, :now)
                """
            ),
            {"id": application_id, "sequence": sequence, "decision": decision, "note": note,
             "admin": admin_user_id, "invitation_id": invitation_id, "outbox_id": outbox_id, "now": now},
        )
        conn.execute(
            sa.text(
                """
                UPDATE company_applications
                SET state = :state, decision_count = :sequence, company_id = COALESCE(:company_id, company_id),
                    updated_at = :now
                WHERE id = :id AND decision_count = :count
                """
            ),
            {"state": DECISIONS[decision], "sequence": sequence, "company_id": company_id, "now": now,
             "id": application_id, "count": count},
        )
    published = publish_outbox_rows(db, redis, [outbox_id])
    log.info("application %s: decision %s (%s) recorded", application_id, sequence, decision)
    return outcome(sequence, replayed=False, queued=published.queued)


# --- reads ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Application:
    id: int
    company_name: str
    contact_name: str
    contact_email: str
    employee_count: int
    message: str
    state: str
    decision_count: int
    company_id: int | None
    created_at: str
    updated_at: str

    @property
    def state_label(self) -> str:
        return STATE_LABELS[self.state]

    @property
    def is_open(self) -> bool:
        return self.state in OPEN_STATES

    @property
    def received_on(self) -> str:
        return display_time(self.created_at)


@dataclass(frozen=True)
class Decision:
    sequence: int
    decision: str
    note: str
    decided_by: str
    email_status: str | None
    created_at: str

    @property
    def label(self) -> str:
        return DECISION_LABELS[self.decision]

    @property
    def decided_on(self) -> str:
        return display_time(self.created_at)


@dataclass(frozen=True)
class ApplicationDetail:
    application: Application
    decisions: list[Decision] = field(default_factory=list)
    received_email_status: str | None = None
    company_exists: bool = False     # approving would add a manager to an existing partner
    contact_has_account: bool = False


_COLUMNS = ", ".join(f.name for f in Application.__dataclass_fields__.values())


def applications_by_state(db: Database) -> tuple[dict[str, list[Application]], dict[str, int]]:
    """The newest applications in each state (at most LIST_LIMIT each), and each state's count."""
    with db.read() as conn:
        counts = dict(conn.execute(sa.text("SELECT state, COUNT(*) FROM company_applications GROUP BY state")).all())
        groups = {}
        for state in STATES:
            rows = conn.execute(
                sa.text(f"SELECT {_COLUMNS} FROM company_applications WHERE state = :s "
                        "ORDER BY created_at DESC, id DESC LIMIT :limit"),
                {"s": state, "limit": LIST_LIMIT},
            ).mappings()
            groups[state] = [Application(**row) for row in rows]
    return groups, {state: counts.get(state, 0) for state in STATES}


def get_application(db: Database, application_id: int) -> ApplicationDetail | None:
    with db.read() as conn:
        row = conn.execute(
            sa.text(f"SELECT {_COLUMNS} FROM company_applications WHERE id = :id"), {"id": application_id}
        ).mappings().first()
        if row is None:
            return None
        application = Application(**row)
        decisions = [
            Decision(**d)
            for d in conn.execute(
                sa.text(
                    """
                    SELECT d.sequence, d.decision, d.note, COALESCE(NULLIF(u.name, ''), u.email) AS decided_by,
                           o.status AS email_status, d.created_at
                    FROM application_decisions d
                    JOIN users u ON u.id = d.decided_by
                    LEFT JOIN email_outbox o ON o.id = d.outbox_id
                    WHERE d.application_id = :id ORDER BY d.sequence
                    """
                ),
                {"id": application_id},
            ).mappings()
        ]
        received = conn.execute(
            sa.text("SELECT status FROM email_outbox WHERE idempotency_key = :k"),
            {"k": f"application:{application_id}:received"},
        ).scalar()
        company_exists = application.is_open and conn.execute(
            sa.text("SELECT 1 FROM companies WHERE name_key = :k"), {"k": application.company_name.lower()}
        ).first() is not None
        has_account = conn.execute(
            sa.text("SELECT 1 FROM users WHERE email = :e"), {"e": application.contact_email}
        ).first() is not None
    return ApplicationDetail(application, decisions, received, company_exists, has_account)


# --- helpers --------------------------------------------------------------------------------------

def display_time(value: str) -> str:
    """A stored UTC timestamp as people read it: 3 Oct 2026, 14:05 UTC."""
    try:
        moment = clock.parse(value)
    except ValueError:
        return value
    return f"{moment.day} {moment:%b %Y, %H:%M} UTC"


def _one_line(value: str, what: str, limit: int) -> str:
    clean = " ".join((value or "").split())
    if not clean:
        raise ApplicationError(f"Enter {what}.")
    if len(clean) > limit:
        raise ApplicationError(f"The {what} can be at most {limit} characters.")
    return clean


def _text(value: str | None, what: str, limit: int) -> str:
    clean = (value or "").replace("\r\n", "\n").strip()
    if len(clean) > limit:
        raise ApplicationError(f"The {what} can be at most {limit:,} characters.")
    return clean


def _sql_list(values) -> str:
    assert all(v in STATES for v in values)
    return "(" + ", ".join(f"'{v}'" for v in values) + ")"

