"""Writing partner applications: a company applies; an admin approves, declines or asks for more.

Each write is one `write_then_publish` block holding the domain rows and the email, published
only after the commit. Replays are harmless: an open application is unique per contact and
company, and each decision is numbered, so a double click finds the row it already wrote and
writes nothing.

Languages: the applicant's confirmation is in the language of the page they applied on (the
route passes `language`, stored with the application); TEEI's notification in the inbox's reading
language (English unless the address has an account that chose otherwise); the decision in the
applicant's reading language, or, without an account, in the language they applied in.
A refusal's message is English, marked for the catalogue (`N_`): a page shows it in its own
language from `ApplicationError.message` and `.values`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa

from portal.applications.emails import decision_email, notification_email, received_email
from portal.applications.states import (
    APPROVED,
    DECISIONS,
    DECLINED,
    EMAIL_MAX,
    EMPLOYEES_MAX,
    INFO_REQUESTED,
    MESSAGE_MAX,
    NAME_MAX,
    NEW,
    NOTE_MAX,
    OPEN_STATES,
    STATES,
    sql_list,
)
from portal.auth import ensure_company, reading_language
from portal.core import clock
from portal.core.i18n import ENGLISH, N_, language_or_default
from portal.core.text import InputError, normalise_email, one_line, paragraphs
from portal.invitations import InvitationError, OpenedInvitation, insert_invitation
from portal.outbox import write_then_publish

log = logging.getLogger(__name__)


class ApplicationError(InputError):
    """Bad input for an application operation; the message is safe to show.

    `message` is the catalogue's (English) message and `values` fill its placeholders; str() is the
    English sentence."""

    def __init__(self, message: str, **values):
        super().__init__(message % values if values else message)
        self.message, self.values = message, values


class DecisionRefused(ApplicationError):
    """The application's state refuses this decision; nothing was written."""


class ApplicationNotFound(LookupError):
    pass


@dataclass(frozen=True)
class Submission:
    application_id: int
    created: bool  # False: a replay of an open application; nothing was written
    queued: bool  # False: the confirmation is saved but waits for the relay


_INSERT_APPLICATION = sa.text(
    """
    INSERT INTO company_applications (company_name, company_key, contact_name, contact_email,
        employee_count, message, language, state, created_at, updated_at)
    VALUES (:company_name, :company_key, :contact_name, :contact_email, :employee_count,
        :message, :language, 'new', :now, :now)
    ON CONFLICT DO NOTHING
    RETURNING id
    """
)
# The form is public: whoever sends it chooses the address. Past this many applications naming an
# address in a day, it gets no more confirmations (the applications inbox still hears of each), so
# nobody can flood an inbox through the form, however many clients send it.
CONFIRMATIONS_PER_ADDRESS_PER_DAY = 2
_NAMED_SINCE = sa.text(
    "SELECT COUNT(*) FROM company_applications WHERE contact_email = :contact_email AND created_at > :since"
)
_OPEN_APPLICATION = sa.text(
    "SELECT id FROM company_applications WHERE contact_email = :contact_email AND company_key = :company_key "
    f"AND state IN {sql_list(OPEN_STATES)}"
)


def submit_application(
    ctx,
    *,
    company_name: str,
    contact_name: str,
    contact_email: str,
    employee_count: int,
    message: str = "",
    language: str = ENGLISH,
    now: datetime | None = None,
) -> Submission:
    """Record an application, its confirmation and TEEI's notification in one transaction, then publish.

    `language`: the page's the applicant applied on; their confirmation is written in it. The
    confirmation says nothing typed into the form, and an address gets at most
    CONFIRMATIONS_PER_ADDRESS_PER_DAY of them in the day before `now`."""
    fields = {
        "company_name": one_line(company_name, "your company's name", NAME_MAX, ApplicationError),
        "contact_name": one_line(contact_name, "your name", NAME_MAX, ApplicationError),
        "contact_email": normalise_email(contact_email),
        "employee_count": employee_count,
        "message": paragraphs(message, "the message", MESSAGE_MAX, ApplicationError),
    }
    if "@" not in fields["contact_email"] or len(fields["contact_email"]) > EMAIL_MAX:
        raise ApplicationError(N_("Enter an email address like name@company.com."))
    if not isinstance(employee_count, int) or not 1 <= employee_count <= EMPLOYEES_MAX:
        raise ApplicationError(N_("The number of employees must be a whole number of at least 1."))
    fields["company_key"] = fields["company_name"].lower()
    language = language_or_default(language)

    now = now or clock.utcnow()
    with write_then_publish(ctx, now=now) as work:
        since = clock.iso(now - timedelta(days=1))
        named_today = work.conn.execute(_NAMED_SINCE, {**fields, "since": since}).scalar_one()
        written = {**fields, "language": language, "now": clock.iso(now)}
        application_id = work.conn.execute(_INSERT_APPLICATION, written).scalar()
        if application_id is None:
            # This contact already has an open application for this company: a replay.
            existing = work.conn.execute(_OPEN_APPLICATION, fields).scalar_one()
            return Submission(application_id=existing, created=False, queued=True)
        if named_today < CONFIRMATIONS_PER_ADDRESS_PER_DAY:
            work.add(received_email(application_id, contact_email=fields["contact_email"], language=language))
        work.add(
            notification_email(
                application_id,
                inbox=ctx.settings.applications_inbox,
                language=reading_language(work.conn, ctx.settings.applications_inbox),
                contact_email=fields["contact_email"],
                contact_name=fields["contact_name"],
                company_name=fields["company_name"],
                employee_count=employee_count,
                message=fields["message"],
            ),
        )
    log.info("application %s received", application_id)
    return Submission(application_id=application_id, created=True, queued=work.queued)


@dataclass(frozen=True)
class DecisionOutcome:
    application_id: int
    decision: str
    sequence: int
    company_name: str
    contact_name: str
    replayed: bool  # True: this decision was already recorded; nothing was written now
    queued: bool


def record_decision(
    ctx, *, application_id: int, decision: str, note: str, admin_user_id: int, decisions_seen: int | None = None
) -> DecisionOutcome:
    """Record an admin's decision and its email in one transaction, then publish.

    `decisions_seen` is how many decisions the admin's page showed. A request that repeats the
    latest decision it would have made (same decision and note) is a replay: nothing is written.
    A decision taken on a page that is out of date, or on a closed application, is refused.
    Approving creates the company and invites the contact as its first manager, in the same
    transaction, and the decision email carries the invitation's token nonce.
    """
    note = _checked_note(decision, note)
    with write_then_publish(ctx, now=clock.utcnow()) as work:
        application = _read_application(work.conn, application_id)
        count = application["decision_count"]
        if _repeats_latest_decision(work.conn, application, decision, note, decisions_seen):
            return _outcome(application, decision, count, replayed=True, queued=True)
        _refuse_stale_or_closed(application, decisions_seen)
        sequence = count + 1
        company_id, invitation = None, None
        if decision == "approve":
            company_id, invitation = _make_partner(work.conn, ctx.settings, application, admin_user_id)
        token_nonce = invitation.token_nonce if invitation else None
        (outbox_id,) = work.add(
            decision_email(
                application,
                sequence,
                decision=decision,
                note=note,
                token_nonce=token_nonce,
                language=_applicant_language(work.conn, application),
            )
        )
        _insert_decision(
            work.conn,
            application,
            sequence,
            decision=decision,
            note=note,
            decided_by=admin_user_id,
            invitation_id=invitation.id if invitation else None,
            outbox_id=outbox_id,
        )
        _move_application(work.conn, application, sequence, DECISIONS[decision], company_id)
    log.info("application %s: decision %s (%s) recorded", application_id, sequence, decision)
    return _outcome(application, decision, sequence, replayed=False, queued=work.queued)


def _applicant_language(conn, application) -> str:
    """The decision's language: an applicant with an account reads the portal in their own; one
    without reads it in the language of the page they applied on (stored with the application)."""
    return reading_language(conn, application["contact_email"], otherwise=language_or_default(application["language"]))


def _checked_note(decision: str, note: str) -> str:
    if decision not in DECISIONS:
        raise ApplicationError(N_("Choose approve, decline or ask for more information."))
    note = paragraphs(note, "the note", NOTE_MAX, ApplicationError)
    if decision == "request_info" and not note:
        raise ApplicationError(N_("Say what information you need, so the applicant can answer."))
    return note


def _read_application(conn, application_id: int):
    application = (
        conn.execute(sa.text("SELECT * FROM company_applications WHERE id = :id"), {"id": application_id})
        .mappings()
        .first()
    )
    if application is None:
        raise ApplicationNotFound(application_id)
    return application


def _repeats_latest_decision(conn, application, decision: str, note: str, decisions_seen: int | None) -> bool:
    """A double click or a resent form: the latest decision is this one, taken on the page before it."""
    count = application["decision_count"]
    latest = conn.execute(
        sa.text("SELECT decision, note FROM application_decisions WHERE application_id = :id AND sequence = :n"),
        {"id": application["id"], "n": count},
    ).first()
    return (
        latest is not None
        and (latest.decision, latest.note) == (decision, note)
        and decisions_seen in (None, count - 1)
    )


# Whole sentences per state, so each language words them its own way.
_CHANGED_WHILE_OPEN = {
    NEW: N_(
        "This application changed while you had it open: it is now new. Nothing was saved; review it before deciding."
    ),
    INFO_REQUESTED: N_(
        "This application changed while you had it open: it is now information requested. "
        "Nothing was saved; review it before deciding."
    ),
    APPROVED: N_(
        "This application changed while you had it open: it is now approved. "
        "Nothing was saved; review it before deciding."
    ),
    DECLINED: N_(
        "This application changed while you had it open: it is now declined. "
        "Nothing was saved; review it before deciding."
    ),
}
_ALREADY_FINAL = {
    APPROVED: N_(
        "This application was already approved, and that decision is final. Nothing was saved and no email was sent."
    ),
    DECLINED: N_(
        "This application was already declined, and that decision is final. Nothing was saved and no email was sent."
    ),
}
assert set(_CHANGED_WHILE_OPEN) == set(STATES) and set(_ALREADY_FINAL) == set(STATES) - set(OPEN_STATES)


def _refuse_stale_or_closed(application, decisions_seen: int | None) -> None:
    if decisions_seen is not None and decisions_seen != application["decision_count"]:
        raise DecisionRefused(_CHANGED_WHILE_OPEN[application["state"]])
    if application["state"] not in OPEN_STATES:
        raise DecisionRefused(_ALREADY_FINAL[application["state"]])


def _make_partner(conn, settings, application, admin_user_id: int) -> tuple[int, OpenedInvitation]:
    """Create the company and invite the contact as its first manager."""
    company_id = ensure_company(conn, application["company_name"])
    try:
        invitation = insert_invitation(
            conn,
            settings,
            company_id=company_id,
            email=application["contact_email"],
            role="manager",
            programme=None,
            invited_by=admin_user_id,
        )
    except InvitationError as error:
        # `reason`: the invitation's own refusal, which a page shows in its language too.
        raise DecisionRefused(N_("%(reason)s Nothing was saved."), reason=error) from None
    return company_id, invitation


def _insert_decision(conn, application, sequence: int, **fields) -> None:
    conn.execute(
        sa.text(
            """
            INSERT INTO application_decisions (application_id, sequence, decision, note, decided_by,
                invitation_id, outbox_id, created_at)
            VALUES (:id, :sequence, :decision, :note, :decided_by, :invitation_id, :outbox_id, :now)
            """
        ),
        {"id": application["id"], "sequence": sequence, "now": clock.now_iso(), **fields},
    )


def _move_application(conn, application, sequence: int, state: str, company_id: int | None) -> None:
    conn.execute(
        sa.text(
            """
            UPDATE company_applications
            SET state = :state, decision_count = :sequence, company_id = COALESCE(:company_id, company_id),
                updated_at = :now
            WHERE id = :id AND decision_count = :count
            """
        ),
        {
            "state": state,
            "sequence": sequence,
            "company_id": company_id,
            "now": clock.now_iso(),
            "id": application["id"],
            "count": application["decision_count"],
        },
    )


def _outcome(application, decision: str, sequence: int, *, replayed: bool, queued: bool) -> DecisionOutcome:
    return DecisionOutcome(
        application["id"],
        decision,
        sequence,
        application["company_name"],
        application["contact_name"],
        replayed,
        queued,
    )
