"""Delivery reconciliation in Chromium, with real workers, the provider model and its receipts: the
receipts of some emails never come, and the day's line says exactly how many, and which kind."""

from __future__ import annotations

import time
import urllib.request

import sqlalchemy as sa
from playwright.sync_api import expect
from prometheus_client.parser import text_string_to_metric_families

from e2e.screenshots import ARTIFACTS, shoot
from portal.context import build_context
from portal.core import clock
from portal.core.settings import Settings
from portal.email_families import FAMILIES
from portal.outbox import EmailIntent
from portal.outbox.hear.receipt_lookup import look_up_missing_receipts
from portal.outbox.write.intents import add_outbox_rows
from portal.seed import DEMO_PASSWORD

ADMIN = "admin@teei.example"
SHOTS = ARTIFACTS / "reconciliation"
# The provider model answers by the local part: delivered, a receipt that never comes, a delay,
# a transient and a permanent bounce, a complaint.
RECIPIENTS = {
    "ada@northwind.example": "delivered",
    "noreceipt.bo@northwind.example": "sent",
    "delayed.cy@northwind.example": "sent",
    "bounce.transient.di@northwind.example": "bounced",
    "bounce.ed@northwind.example": "bounced",
    "complain.fi@northwind.example": "complained",
}


def statuses(db) -> dict[str, str]:
    with db.read() as conn:
        return dict(
            conn.execute(
                sa.text("SELECT recipient, status FROM email_outbox WHERE idempotency_key LIKE 'e2e:reconcile:%'")
            ).all()
        )


# The page's headings of the figures the metrics carry, and their names there.
FIGURE_NAMES = (
    "Committed",
    "Accepted",
    "Delivered",
    "Delayed",
    "Bounced",
    "Complained",
    "Awaiting receipt",
    "No receipt",
    "Suppressed",
    "Failed",
    "Unknown outcome",
)


def metric_name(heading: str) -> str:
    return heading.lower().replace(" ", "_")


def reconciled_metrics(stack) -> dict[str, int]:
    """portal_outbox_reconciled for the notice family, as Prometheus scrapes it from the web host."""
    with urllib.request.urlopen(f"{stack.url}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    return {
        sample.labels["figure"]: int(sample.value)
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "portal_outbox_reconciled"
        and sample.labels["family"] == "notice"
        and sample.labels["figure"] in {metric_name(name) for name in FIGURE_NAMES}
    }


def table_line(page) -> list[str]:
    """Today's line (the newest) of the family's table."""
    table = page.get_by_role("table", name="Notice, by day")
    return [cell.strip() for cell in table.locator("tbody tr").first.locator("th, td").all_text_contents()]


def test_the_days_line_counts_the_emails_whose_receipt_never_came(pages, page, stack, portal_env):
    intents = [
        EmailIntent(FAMILIES["notice"], recipient, f"e2e:reconcile:{n}", {"subject": "Hello", "body": "A notice."})
        for n, recipient in enumerate(RECIPIENTS)
    ]
    with stack.db.write() as conn:
        add_outbox_rows(conn, intents, Settings.from_env(portal_env), now=clock.utcnow())
    deadline = time.monotonic() + 60
    while statuses(stack.db) != RECIPIENTS and time.monotonic() < deadline:
        time.sleep(0.2)
    assert statuses(stack.db) == RECIPIENTS
    stack.model.wait_for_receipts()
    with stack.db.write() as conn:  # two days pass: the missing receipt is now overdue
        conn.execute(
            sa.text("UPDATE email_outbox SET sent_at = :then WHERE idempotency_key LIKE 'e2e:reconcile:%'"),
            {"then": clock.iso_in(-49 * 3600)},
        )

    pages.sign_in(ADMIN, DEMO_PASSWORD)
    page.goto(f"{stack.url}/admin/outbox/")
    page.get_by_role("link", name="Delivery reconciliation: what became of each day's emails").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Delivery reconciliation")
    page.get_by_label("Family", exact=True).select_option("notice")
    page.get_by_role("button", name="Show").click()
    header = [
        cell.strip()
        for cell in page.get_by_role("table", name="Notice, by day").locator("thead th").all_text_contents()
    ]
    line = dict(zip(header, table_line(page), strict=True))
    assert {name: line[name] for name in header[1:]} == {
        "Committed": "6",
        "Accepted": "6",
        "Delivered": "1",
        "Delayed": "1",
        "Bounced": "2",
        "of them transient": "1",
        "Complained": "1",
        "Awaiting receipt": "0",
        "No receipt": "1",
        "Suppressed": "0",
        "Failed": "0",
        "Unknown outcome": "0",
        "Cancelled or dead letter": "0",
        "Still sending": "0",
    }
    expect(page.locator("#summary")).to_contain_text("1 without an answer")
    assert reconciled_metrics(stack) == {
        metric_name(figure): int(count) for figure, count in line.items() if figure in FIGURE_NAMES
    }
    unanswered = page.get_by_role("region", name="Without an answer")
    expect(unanswered).to_contain_text("noreceipt.bo@northwind.example")
    expect(unanswered).to_contain_text("not asked yet")
    shoot(page, SHOTS, "reconciliation")

    # The worker's lookup pass, run here at once (it runs every ten minutes): the provider says the
    # email was delivered, and that is recorded as a receipt from a lookup.
    context = build_context(Settings.from_env({**portal_env, "RESEND_API_URL": stack.model.url}))
    try:
        result = look_up_missing_receipts(context, now=clock.utcnow())
    finally:
        context.db.dispose()
    assert (result.asked, result.learned) == (1, 1)
    page.reload()
    line = dict(zip(header, table_line(page), strict=True))
    assert (line["Delivered"], line["No receipt"]) == ("2", "0")
    after = reconciled_metrics(stack)
    assert (after["delivered"], after["no_receipt"]) == (2, 0)
    expect(page.get_by_text("Every email the provider accepted has its answer")).to_be_visible()
    with stack.db.read() as conn:
        lost = conn.execute(
            sa.text("SELECT id FROM email_outbox WHERE recipient = 'noreceipt.bo@northwind.example'")
        ).scalar_one()
    page.goto(f"{stack.url}/admin/outbox/{lost}")
    history = page.locator(".timeline")
    expect(history).to_contain_text("Delivered to the recipient's server (learned by asking Resend)")
    shoot(page, SHOTS, "reconciliation-email")
