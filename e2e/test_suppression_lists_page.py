"""The suppression lists compared, in Chromium: the reconciliation page's section shows the last
comparison's figures and each difference with its offers; an erased person is shown as such; an
offer acted on says what it did, and the lists agree on that entry."""

from __future__ import annotations

import sqlalchemy as sa
from playwright.sync_api import expect

from e2e.screenshots import ARTIFACTS, WIDTHS, shoot
from portal.context import build_context
from portal.core import clock
from portal.core.pseudonyms import address_hash
from portal.core.settings import Settings
from portal.outbox.hear.suppression_comparison import compare_suppressions
from portal.outbox.hear.suppressions import add_suppression
from portal.seed import DEMO_PASSWORD

ADMIN = "admin@teei.example"
SHOTS = ARTIFACTS / "reconciliation"


def compare(stack, portal_env):
    """A comparison pass now, as the worker runs it."""
    context = build_context(Settings.from_env({**portal_env, "RESEND_API_URL": stack.model.url}))
    try:
        return compare_suppressions(context, now=clock.utcnow())
    finally:
        context.db.dispose()


def test_the_lists_compared_and_a_difference_settled_from_the_page(pages, page, stack, portal_env):
    stack.model.pause_receipts()  # Resend's suppression.* events never come: the lists drift apart
    for address in ("bounced.once@northwind.example", "left.us@northwind.example", "both@northwind.example"):
        stack.model.suppress(address)
    with stack.db.write() as conn:
        admin_id = conn.execute(sa.text("SELECT id FROM users WHERE email = :e"), {"e": ADMIN}).scalar_one()
        conn.execute(  # an erased person: the portal knows the address only as its keyed hash
            sa.text("INSERT INTO erased_addresses (address_hash, pseudonym, erased_at) VALUES (:h, :p, :t)"),
            {
                "h": address_hash("left.us@northwind.example", stack.secret_key),
                "p": "erased-0123456789ab@erased.invalid",
                "t": clock.iso(clock.utcnow()),
            },
        )
    for address in ("both@northwind.example", "asked.by.phone@northwind.example"):
        add_suppression(stack.db, email=address, reason="asked by phone", actor_user_id=admin_id, now=clock.utcnow())
    result = compare(stack, portal_env)
    assert (result.on_both, result.only_at_provider, result.only_in_portal) == (1, 2, 1)

    pages.sign_in(ADMIN, DEMO_PASSWORD)
    page.goto(f"{stack.url}/admin/outbox/reconciliation#suppression-lists")
    section = page.get_by_role("region", name="Suppression lists", exact=True)
    expect(section.locator(".stat")).to_have_text(["1On both lists", "2Only at Resend", "1Only in the portal"])
    table = section.get_by_role("table", name="Differences between the suppression lists, newest first")
    expect(table).to_contain_text("an erased person")
    expect(table).not_to_contain_text("left.us@northwind.example")
    expect(table.get_by_role("button", name="Add at Resend: asked.by.phone@northwind.example")).to_be_visible()
    shoot(page, SHOTS, "suppression-lists")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        assert page.evaluate("document.documentElement.scrollWidth") <= width, f"scrolls sideways at {width}"

    table.get_by_role("button", name="Add to the portal: bounced.once@northwind.example").click()
    expect(page.get_by_role("status")).to_contain_text(
        "bounced.once@northwind.example was added to the portal’s suppression list."
    )
    table.get_by_role("button", name="Remove at Resend: an erased person").click()
    expect(page.get_by_role("status")).to_contain_text("An erased person was removed from Resend’s suppression list.")
    assert "left.us@northwind.example" not in {entry["email"] for entry in stack.model.suppressions()}
    expect(table).not_to_contain_text("an erased person")
    expect(section).to_contain_text("2 of the differences it found were settled since, and are no longer listed.")
    shoot(page, SHOTS, "suppression-lists-settled")

    stack.model.fail_next("http_429", path="/suppressions")  # the next pass finds Resend busy
    assert compare(stack, portal_env).stopped == "provider_rate_limited"
    page.reload()
    expect(section).to_contain_text("is incomplete: it stopped before it had read Resend’s whole list")
    expect(table.get_by_role("button", name="Add at Resend: asked.by.phone@northwind.example")).to_be_visible()
    shoot(page, SHOTS, "suppression-lists-incomplete")
