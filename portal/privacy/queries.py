"""Everything the portal holds about one email address, section by section.

Each section is a list of plain rows, written into the download as JSON and CSV. What belongs to
other people stays out: an email's template input (it may name the inviter), a password hash, a
token. The email tables are read through the engine (portal.outbox.operate.reads.emails_to).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sqlalchemy as sa

from portal.core.db import Database
from portal.core.i18n import N_
from portal.core.text import normalise_email
from portal.outbox.operate.reads import emails_to

# Section name -> what it is, for the README in the download and the admins' page (in English,
# marked for the catalogue: each translates it where it is shown).
SECTIONS = {
    "account": N_("Your account: address, name, role, company and when it was made or deactivated."),
    "memberships": N_("The companies you belonged to, and when (your hours count for the company of the day)."),
    "invitations": N_("Invitations sent to your address, and whether they were accepted or revoked."),
    "attendance": N_("Every session the programme platforms reported for your address."),
    "emails": N_("Every email the portal wrote to your address: its kind, status and times (not its content)."),
    "receipts": N_("What the email provider reported about those emails (delivered, bounced, opened...)."),
    "suppressions": N_("Whether the portal stopped emailing your address (a bounce or complaint), and when."),
    "suppression_history": N_("Every change to that entry."),
    "campaign_recipients": N_("The campaigns (newsletters) that were sent to you."),
    "campaign_unsubscribes": N_("Campaigns you unsubscribed from."),
    "campaign_topic_optouts": N_("The campaign topics you opted out of, and when."),
    "applications": N_("Partner applications you sent as a company's contact."),
    "demo_requests": N_("Demo requests you sent."),
    "report_subscriptions": N_("Report emails you subscribed to as a manager."),
    "own_time_choices": N_("Your choices whether your own-time hours count in your employer's report, and when."),
    "certificates": N_(
        "The certificates of your volunteering you made: each one's ID, period and figures as printed "
        "(anyone with the ID can check it)."
    ),
    "password_resets": N_("Password reset links made for your account (never the link itself)."),
    "decisions_taken": N_("Decisions on partner applications you took as an admin."),
    "outbox_actions_taken": N_("Actions you took on emails in the operator's console, as an admin."),
    "privacy_events": N_("Every download and erasure of this data."),
}

_BY_USER = {
    "memberships": """SELECT c.name AS company, m.started_at, m.ended_at FROM company_memberships m
                      JOIN companies c ON c.id = m.company_id WHERE m.user_id = :user_id ORDER BY m.started_at""",
    "campaign_unsubscribes": """SELECT c.name AS campaign, u.created_at FROM campaign_unsubscribes u
                                LEFT JOIN campaigns c ON c.id = u.campaign_id WHERE u.user_id = :user_id""",
    "campaign_topic_optouts": """SELECT topic, created_at FROM campaign_topic_optouts
                                 WHERE user_id = :user_id ORDER BY topic""",
    "report_subscriptions": """SELECT c.name AS company, s.frequency, s.since, s.updated_at FROM report_subscriptions s
                               JOIN companies c ON c.id = s.company_id WHERE s.user_id = :user_id""",
    "own_time_choices": """SELECT counted, chosen_at FROM own_time_choices WHERE user_id = :user_id ORDER BY id""",
    "certificates": """SELECT certificate_id, name, company_name, period_start, period_end, minutes, sessions,
                              programmes, issued_on, created_at
                       FROM volunteer_certificates WHERE user_id = :user_id ORDER BY id""",
    "password_resets": """SELECT created_at, expires_at, used_at FROM password_resets
                          WHERE user_id = :user_id ORDER BY id""",
    "decisions_taken": """SELECT a.company_name AS application, d.decision, d.note, d.created_at
                          FROM application_decisions d JOIN company_applications a ON a.id = d.application_id
                          WHERE d.decided_by = :user_id ORDER BY d.id""",
    "outbox_actions_taken": """SELECT outbox_id, action, reason, created_at FROM email_outbox_events
                               WHERE actor_user_id = :user_id ORDER BY id""",
    "privacy_events": """SELECT action, created_at FROM privacy_events WHERE subject_user_id = :user_id ORDER BY id""",
}
_BY_ADDRESS = {
    "invitations": """SELECT c.name AS company, i.name AS name_given, i.role, i.programme, i.created_at, i.expires_at, i.send_count,
                             i.accepted_at, i.revoked_at
                      FROM invitations i JOIN companies c ON c.id = i.company_id WHERE i.email = :address""",
    "attendance": """SELECT platform, session_id, held_at, minutes, status, updated_at FROM attendance_sessions
                     WHERE volunteer_email = :address ORDER BY held_at""",
    "campaign_recipients": """SELECT c.name AS campaign, c.subject, c.started_at AS sent_at, r.name
                              FROM campaign_recipients r JOIN campaigns c ON c.id = r.campaign_id
                              WHERE r.email = :address ORDER BY c.started_at""",
    "applications": """SELECT company_name, contact_name, contact_email, employee_count, message, state, created_at
                       FROM company_applications WHERE contact_email = :address ORDER BY id""",
    "demo_requests": """SELECT name, email, company, message, status, note, created_at FROM demo_submissions
                        WHERE email = :address ORDER BY id""",
}
_ACCOUNT = sa.text(
    """
    SELECT u.id, u.email, u.name, u.role, c.name AS company, u.programme, u.created_at, u.deactivated_at
    FROM users u LEFT JOIN companies c ON c.id = u.company_id WHERE u.email = :address
    """
)


# A receipt as the download gives it: one flat row, the fields the portal kept of the provider's
# event in columns of their own (its stored JSON would be one unreadable cell of a spreadsheet).
RECEIPT_COLUMNS = [
    "outbox_id",
    "type",
    "event_created_at",
    "received_at",
    "outcome",
    "to",
    "bounce_type",
    "bounce_subtype",
    "provider_message_id",
]
# The columns of the sections the engine reads (portal/outbox/operate/personal_data.py), for the
# header row of a section with no rows; tests/privacy/test_erasure.py holds them to the engine's rows.
ENGINE_COLUMNS = {
    "emails": [
        "id",
        "family",
        "status",
        "attempt_count",
        "provider_message_id",
        "created_at",
        "first_attempt_at",
        "sent_at",
        "last_event_at",
        "updated_at",
    ],
    "receipts": RECEIPT_COLUMNS,
    "suppressions": ["email", "reason", "source", "created_at"],
    "suppression_history": ["action", "reason", "source", "created_at"],
}


@dataclass(frozen=True)
class PersonalData:
    address: str
    user_id: int | None
    sections: dict[str, list[dict]]
    # Each section's columns, in order, whether or not it has rows (a CSV's header row).
    columns: dict[str, list[str]] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(len(rows) for rows in self.sections.values())

    def counts(self) -> dict[str, int]:
        return {name: len(rows) for name, rows in self.sections.items()}


def personal_data(db: Database, address: str) -> PersonalData:
    """What the portal holds about `address`, every section (empty ones too), in one read."""
    address = normalise_email(address)
    columns: dict[str, list[str]] = {**ENGINE_COLUMNS}
    with db.read() as conn:
        found = conn.execute(_ACCOUNT, {"address": address})
        columns["account"] = list(found.keys())
        account = found.mappings().first()
        user_id = account["id"] if account else None
        sections = {"account": [dict(account)] if account else []}
        for name, sql in _BY_ADDRESS.items():
            found = conn.execute(sa.text(sql), {"address": address})
            columns[name] = list(found.keys())
            sections[name] = [dict(row) for row in found.mappings().all()]
        for name, sql in _BY_USER.items():
            # Without an account, the statement's columns alone (no row has this user ID).
            found = conn.execute(sa.text(sql), {"user_id": user_id if user_id else -1})
            columns[name] = list(found.keys())
            sections[name] = [dict(row) for row in found.mappings().all()] if user_id else []
        sections.update(emails_to(conn, address))
    sections["receipts"] = [readable_receipt(receipt) for receipt in sections["receipts"]]
    return PersonalData(
        address=address,
        user_id=user_id,
        sections={name: sections[name] for name in SECTIONS},
        columns={name: columns[name] for name in SECTIONS},
    )


def readable_receipt(receipt: dict) -> dict:
    """A receipt's row as stored (its kept fields as JSON in `payload`), as one flat row."""
    kept = receipt.get("payload") or {}
    return {
        "outbox_id": receipt.get("outbox_id"),
        "type": receipt.get("type"),
        "event_created_at": receipt.get("event_created_at"),
        "received_at": receipt.get("received_at"),
        "outcome": receipt.get("outcome"),
        "to": kept.get("to"),
        "bounce_type": kept.get("bounce_type"),
        "bounce_subtype": kept.get("bounce_subtype"),
        "provider_message_id": kept.get("email_id"),
    }
