"""What the console shows: the grid of counts, a page of the filtered list, one email's history.

Every read goes through the engine's operator face (portal/outbox/operate/operator.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from flask_babel import gettext as _

from portal.core.i18n import N_
from portal.core.periods import local_midnight
from portal.core.redaction import mask_link_tokens
from portal.invitations import invitation_company
from portal.outbox.ground.statuses import ALL
from portal.outbox.operate import operator
from portal.outbox.operate.operator import eligible_actions, is_unknown_outcome


@dataclass(frozen=True)
class CountGrid:
    families: list[str]
    statuses: list[str]  # the statuses any family has rows in, in the engine's order
    counts: dict[str, dict[str, int]]

    def total(self, status: str) -> int:
        return sum(by_status.get(status, 0) for by_status in self.counts.values())


def sending_pauses(ctx) -> list[operator.ShownPause]:
    """Every pause of sending that holds now, with who set it and why."""
    return operator.shown_pauses(ctx)


def count_grid(db) -> CountGrid:
    counts = operator.family_status_counts(db)
    present = {status for by_status in counts.values() for status in by_status}
    return CountGrid(families=sorted(counts), statuses=[s for s in ALL if s in present], counts=counts)


def outbox_filter(
    *,
    zone: ZoneInfo,
    status: str = "",
    family: str = "",
    q: str = "",
    created_from: date | None = None,
    created_to: date | None = None,
) -> operator.OutboxFilter:
    """The list's filters as the engine takes them: dates are whole days in the portal's zone, as the
    list shows its times, `to` inclusive."""
    return operator.OutboxFilter(
        status=status if status in ALL else "",
        family=family or "",
        recipient=(q or "").strip().lower(),
        created_from=local_midnight(created_from, zone) if created_from else "",
        created_before=local_midnight(created_to + timedelta(days=1), zone) if created_to else "",
    )


def outbox_page(db, filters: operator.OutboxFilter, cursor: str | None) -> operator.OutboxPage:
    """A page of the list, each row with its `subject` (while its content is kept) and `about`
    (what it is about, in words: shown in the subject's place once its content is gone)."""
    page = operator.outbox_page(db, filters, cursor)
    subjects = operator.subjects_of(db, [row["id"] for row in page.rows])
    rows = []
    for row in page.rows:
        subject, subject_ref = subjects.get(row["id"], (None, None))
        rows.append({**row, "subject": subject, "about": about_words(subject_ref)})
    return replace(page, rows=rows)


@dataclass(frozen=True)
class About:
    """What an email is about, in words, and the admin page that shows it (if there is one)."""

    label: str
    endpoint: str | None = None
    args: dict | None = None


# subject_ref kinds (each area's emails.py writes its own) and the admin page of each.
ABOUT_PAGES = {
    "application": (N_("Partner application %(id)s"), "applications.admin_detail", "application_id"),
    "campaign": (N_("Campaign %(id)s"), "campaigns.show", "campaign_id"),
    "campaign-test": (N_("Test send of campaign %(id)s"), "campaigns.show", "campaign_id"),
    "demo_submission": (N_("Demo request %(id)s"), "demo.admin_detail", "submission_id"),
    "report-run": (N_("Report email of company %(id)s"), "admin.company", "company_id"),
}
INVITATION = N_("Invitation %(id)s")
ABOUT_WORDS = {
    "invitation": INVITATION,
    "password-reset": N_("Password reset %(id)s"),
    "report-test": N_("Test report"),
}


def about_words(subject_ref: str | None) -> str:
    """What an email is about, in words alone (a list's row: no page looked up)."""
    if not subject_ref:
        return ""
    kind, _colon, rest = subject_ref.partition(":")
    first = rest.split(":")[0]
    if kind in ABOUT_PAGES and first.isdigit():
        return _(ABOUT_PAGES[kind][0], id=first)
    if kind in ABOUT_WORDS:
        return _(ABOUT_WORDS[kind], id=first)
    return subject_ref


def about(db, subject_ref: str | None) -> About | None:
    if not subject_ref:
        return None
    kind, _colon, rest = subject_ref.partition(":")
    first = rest.split(":")[0]
    if kind in ABOUT_PAGES and first.isdigit():
        label, endpoint, arg = ABOUT_PAGES[kind]
        return About(_(label, id=first), endpoint, {arg: int(first)})
    if kind == "invitation" and first.isdigit():
        company_id = invitation_company(db, int(first))
        if company_id is not None:  # the company's page lists its invitations
            return About(_(INVITATION, id=first), "admin.company", {"company_id": company_id})
    if kind in ABOUT_WORDS:
        return About(_(ABOUT_WORDS[kind], id=first))
    return About(subject_ref)  # a kind the console has no words for: as the area wrote it


@dataclass(frozen=True)
class EmailDetail:
    row: dict
    timeline: list[operator.TimelineEntry]
    actions: list[str]  # what the row allows now
    unknown_outcome: bool
    about: About | None


def email_detail(db, outbox_id: str) -> EmailDetail | None:
    row = operator.outbox_row(db, outbox_id)
    if row is None:
        return None
    return EmailDetail(
        row={**row, "email": shown(row["email"])},
        timeline=operator.timeline(db, row),
        actions=eligible_actions(row),
        unknown_outcome=is_unknown_outcome(row),
        about=about(db, row["subject_ref"]),
    )


def email_html(db, outbox_id: str) -> str | None:
    """The frozen email's HTML, while it is kept, as the console shows it."""
    email = shown(operator.frozen_email_of(db, outbox_id))
    return email.html if email else None


def shown(email: operator.FrozenEmail | None) -> operator.FrozenEmail | None:
    """An email as an admin may see it: its links' tokens (an invitation's, a password reset's) are
    the recipient's keys, so they are masked; the engine still sends the email as frozen."""
    if email is None:
        return None
    return replace(email, html=mask_link_tokens(email.html), text=mask_link_tokens(email.text))


def retention(db, settings) -> list[operator.Kept]:
    return operator.retention_glance(db, settings)


RECONCILED_DAYS = 30


def reconciliation(db, settings, *, zone: ZoneInfo, today: date, now: datetime) -> operator.Reconciliation:
    """The last RECONCILED_DAYS local days, today last."""
    days = [today - timedelta(days=n) for n in range(RECONCILED_DAYS - 1, -1, -1)]
    return operator.reconcile(db, days=days, zone=zone, no_receipt_hours=settings.outbox_no_receipt_hours, now=now)


def past_provider_memory(db, settings, *, now: datetime) -> int:
    return operator.past_provider_memory(db, retention_days=settings.provider_log_retention_days, now=now)


def unexplained(db, settings, *, now: datetime) -> list[dict]:
    return operator.unexplained_emails(db, no_receipt_hours=settings.outbox_no_receipt_hours, now=now)


def suppression_comparison(db) -> operator.Comparison:
    """The last comparison of Resend's suppression list with the portal's, and its differences."""
    return operator.comparison(db)
