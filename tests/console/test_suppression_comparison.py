"""Resend's suppression list and the portal's, compared through the API (the real `resend` SDK over
HTTP to the provider model) against a real database: each kind of difference found, an erased person
matched by the keyed hash and never shown, each offer acted on once and audited, an outage that
leaves an honest "incomplete", the worker's daily schedule, the command and the page's section."""

from __future__ import annotations

import html
import re
import uuid
from datetime import timedelta

import pytest
import sqlalchemy as sa

from portal.core import clock
from portal.core.pseudonyms import address_hash
from portal.outbox.ground.periodic import run_once_with_lock
from portal.outbox.hear.receipt_lookup import PROVIDER_BUSY, PROVIDER_UNREACHABLE, SENDING_FIRST
from portal.outbox.hear.suppression_comparison import (
    NEVER_AT_PROVIDER,
    NEVER_IN_PORTAL,
    REMOVED_AT_PROVIDER,
    REMOVED_IN_PORTAL,
    compare_suppressions,
    comparison_task,
)
from portal.outbox.hear.suppressions import add_suppression, remove_suppression
from portal.outbox.send.rate_limit import PAUSE_KEY
from portal.privacy.operations import erase_person
from tests.pages import csrf_from

PAGE = "/admin/outbox/reconciliation"


@pytest.fixture
def actor(make_user, user_id):
    """An admin's user ID, for changes made through the suppression list's own page."""
    return user_id(make_user("admin", email="listkeeper@example.org"))


@pytest.fixture
def portal_list(ctx, actor):
    """portal_list.add(address) / .remove(address): the portal's list changed as an admin changes it."""

    class PortalList:
        def add(self, email):
            add_suppression(ctx.db, email=email, reason="asked", actor_user_id=actor, now=clock.utcnow())

        def remove(self, email):
            remove_suppression(ctx.db, email=email, reason="mistake", actor_user_id=actor, now=clock.utcnow())

        def keys(self):
            with ctx.db.read() as conn:
                return {row[0] for row in conn.execute(sa.text("SELECT email FROM email_suppressions"))}

    return PortalList()


def differences(ctx) -> dict[str, str]:
    with ctx.db.read() as conn:
        return dict(conn.execute(sa.text("SELECT email, cause FROM email_suppression_differences")).all())


def difference_id(ctx, email) -> int:
    with ctx.db.read() as conn:
        return conn.execute(
            sa.text("SELECT id FROM email_suppression_differences WHERE email = :e"), {"e": email}
        ).scalar_one()


def audit(ctx) -> list[tuple]:
    with ctx.db.read() as conn:
        return [
            tuple(row)
            for row in conn.execute(
                sa.text("SELECT email, action, side, source, actor_user_id FROM email_suppression_events ORDER BY id")
            )
        ]


def at_resend(provider_model) -> set[str]:
    return {entry["email"] for entry in provider_model.suppressions()}


def erase(ctx, email, *, listed: bool):
    """What an erasure leaves: the address known only by its keyed hash, and (if it was suppressed)
    its entry on the portal's list under that hash."""
    hashed = address_hash(email, ctx.settings.secret_key)
    with ctx.db.write() as conn:
        conn.execute(
            sa.text("INSERT INTO erased_addresses (address_hash, pseudonym, erased_at) VALUES (:h, :p, :now)"),
            {"h": hashed, "p": f"erased-{uuid.uuid4().hex[:12]}@erased.invalid", "now": clock.iso(clock.utcnow())},
        )
        if listed:
            conn.execute(
                sa.text(
                    "INSERT INTO email_suppressions (email, reason, source, created_at) VALUES (:h, 'bounced', 'webhook', :now)"
                ),
                {"h": hashed, "now": clock.iso(clock.utcnow())},
            )
    return hashed


@pytest.fixture
def four_differences(ctx, provider_model, portal_list):
    """One difference of each kind, and one address on both lists, after two passes."""
    provider_model.suppress("both@example.org")
    portal_list.add("both@example.org")
    provider_model.suppress("removed-here@example.org")  # was on both; an admin removed it here
    portal_list.add("removed-here@example.org")
    portal_list.remove("removed-here@example.org")
    provider_model.suppress("only-there@example.org")  # Resend's own (a manual entry there)
    provider_model.suppress("removed-there@example.org")
    portal_list.add("removed-there@example.org")
    portal_list.add("only-here@example.org")  # an admin's; Resend never had it
    first = compare_suppressions(ctx, now=clock.utcnow() - timedelta(days=1))
    assert (first.on_both, first.only_at_provider, first.only_in_portal) == (2, 2, 1)
    provider_model.unsuppress("removed-there@example.org")  # someone removed it in Resend's dashboard
    return compare_suppressions(ctx, now=clock.utcnow())


# --- the pass ----------------------------------------------------------------------------------------


def test_the_pass_finds_each_kind_of_difference_and_keeps_since_when(ctx, four_differences):
    assert (four_differences.stopped, four_differences.listed) == (None, 3)
    assert (four_differences.on_both, four_differences.only_at_provider, four_differences.only_in_portal) == (1, 2, 2)
    assert differences(ctx) == {
        "removed-here@example.org": REMOVED_IN_PORTAL,
        "only-there@example.org": NEVER_IN_PORTAL,
        "removed-there@example.org": REMOVED_AT_PROVIDER,
        "only-here@example.org": NEVER_AT_PROVIDER,
    }
    with ctx.db.read() as conn:
        since = dict(conn.execute(sa.text("SELECT email, since < seen_at FROM email_suppression_differences")).all())
    assert since["only-here@example.org"] and since["only-there@example.org"]  # found a day ago, still there
    assert not since["removed-there@example.org"]  # new in this pass


def test_the_pass_reads_every_page_of_resends_list(ctx, provider_model):
    with ctx.db.write() as conn:
        for n in range(230):
            provider_model.suppress(f"person{n}@example.org")
            if n % 2:
                conn.execute(
                    sa.text(
                        "INSERT INTO email_suppressions (email, reason, source, created_at) VALUES (:e, 'x', 'admin', :t)"
                    ),
                    {"e": f"person{n}@example.org", "t": clock.iso(clock.utcnow())},
                )
    result = compare_suppressions(ctx, now=clock.utcnow())
    assert (result.listed, result.on_both, result.only_at_provider, result.only_in_portal) == (230, 115, 115, 0)


def test_an_erased_person_is_matched_by_the_keyed_hash_and_never_written_plain(ctx, provider_model):
    hashed = erase(ctx, "gone@example.org", listed=True)
    provider_model.suppress("gone@example.org")  # both lists hold it: Resend by address, the portal by hash
    hashed_only_there = erase(ctx, "left@example.org", listed=False)
    provider_model.suppress("left@example.org")  # only at Resend
    result = compare_suppressions(ctx, now=clock.utcnow())
    assert (result.on_both, result.only_at_provider, result.only_in_portal) == (1, 1, 0)
    assert differences(ctx) == {hashed_only_there: NEVER_IN_PORTAL}
    with ctx.db.read() as conn:
        kept = [
            value
            for table in ("email_suppression_differences", "email_suppressions", "email_suppression_events")
            for row in conn.execute(sa.text(f"SELECT * FROM {table}"))
            for value in row
        ]
    assert not any("left@" in str(v) or "gone@" in str(v) for v in kept)
    assert hashed in {str(v) for v in kept}


def test_an_outage_mid_pass_is_recorded_as_incomplete_and_keeps_the_last_differences(
    ctx, provider_model, portal_list, admin, client
):
    for n in range(150):
        provider_model.suppress(f"person{n}@example.org")
    portal_list.add("only-here@example.org")
    assert compare_suppressions(ctx, now=clock.utcnow() - timedelta(hours=2)).only_at_provider == 150
    before = differences(ctx)

    provider_model.fail_next("http_429", path="/suppressions", skip=1)  # the second page meets a 429
    busy = compare_suppressions(ctx, now=clock.utcnow() - timedelta(hours=1))
    assert (busy.stopped, busy.listed, busy.on_both) == (PROVIDER_BUSY, 100, None)
    provider_model.fail_next("drop_after_accept", path="/suppressions", skip=1)  # the connection drops
    away = compare_suppressions(ctx, now=clock.utcnow())
    assert (away.stopped, away.listed) == (PROVIDER_UNREACHABLE, 100)
    # A partial list would have made 50 of Resend's entries look removed there; the last complete
    # pass's differences stand.
    assert differences(ctx) == before

    page = html.unescape(client.get(PAGE).get_data(as_text=True))
    assert (
        "is incomplete: it stopped before it had read Resend’s whole list, because Resend could not be reached." in page
    )
    assert "What follows is from the last complete comparison" in page


def test_the_pass_takes_a_slot_of_the_shared_send_limit_and_lets_sending_go_first(ctx, provider_model):
    provider_model.suppress("only-there@example.org")
    ctx.redis.set(PAUSE_KEY, "1", px=5_000)  # the provider told every sender to wait: no slot comes
    result = compare_suppressions(ctx, now=clock.utcnow())
    assert (result.stopped, result.listed) == (SENDING_FIRST, 0)
    assert differences(ctx) == {}


def test_an_unreachable_resend_from_the_start_is_an_incomplete_pass(ctx, provider_model, runner):
    provider_model.stop()
    result = runner.invoke(args=["outbox", "compare-suppressions"])
    assert result.exit_code == 1
    assert "incomplete: stopped (provider_unreachable) after 0 entries" in result.output


def test_the_worker_compares_once_a_day_and_again_after_an_incomplete_pass(ctx, provider_model):
    task = comparison_task(ctx.settings)
    now = clock.utcnow()

    def passes():
        with ctx.db.read() as conn:
            return conn.execute(sa.text("SELECT stopped FROM email_suppression_passes ORDER BY id")).scalars().all()

    provider_model.fail_next("http_500", path="/suppressions")
    task.run(ctx, now)
    task.run(ctx, now + timedelta(hours=1))  # the last pass was incomplete: again
    task.run(ctx, now + timedelta(hours=2))  # a complete one ran within the day: not again
    assert passes() == ["provider_error_500", None]
    task.run(ctx, now + timedelta(hours=26))
    assert passes() == ["provider_error_500", None, None]
    ctx.redis.delete(task.lock_key)
    assert run_once_with_lock(ctx, task, now=now + timedelta(hours=27))
    assert not run_once_with_lock(ctx, task, now=now + timedelta(hours=27))  # one worker an hour


def test_the_command_compares_now_and_prints_the_counts(ctx, provider_model, runner):
    provider_model.suppress("only-there@example.org")
    result = runner.invoke(args=["outbox", "compare-suppressions"])
    assert result.exit_code == 0, result.output
    assert "1 at Resend; 0 on both lists, 1 only at Resend, 0 only in the portal" in result.output


# --- the page and its offers -------------------------------------------------------------------------


def offer(client, difference, offer):
    token = csrf_from(client.get(PAGE).get_data(as_text=True))
    return client.post(
        f"/admin/outbox/reconciliation/suppressions/{difference}", data={"offer": offer, "csrf_token": token}
    )


def test_the_page_shows_the_lists_compared_with_an_offer_for_each_difference(ctx, four_differences, admin, client):
    page = client.get(PAGE)
    assert page.status_code == 200
    text = html.unescape(page.get_data(as_text=True))
    section = text[
        text.index('id="suppression-lists"') : text.index("</section>", text.index('id="suppression-lists"'))
    ]
    figures = re.findall(r'stat-value[^"]*">(\d+)</span><span class="stat-label">([^<]+)', section)
    assert [(label, int(n)) for n, label in figures] == [
        ("On both lists", 1),
        ("Only at Resend", 2),
        ("Only in the portal", 2),
    ]
    rows = {
        email: (cause, re.findall(r'value="(\w+)"', buttons))
        for email, cause, buttons in re.findall(
            r"<td class=\"address\">([^<]+@example\.org)</td>\s*<td>([^<]+)</td>.*?<td class=\"actions\">(.*?)</td>\s*</tr>",
            section,
            re.S,
        )
    }
    assert rows == {
        "removed-here@example.org": ("Only at Resend: removed from the portal’s list", ["remove_at_provider"]),
        "only-there@example.org": (
            "Only at Resend: never on the portal’s list",
            ["add_to_portal", "remove_at_provider"],
        ),
        "removed-there@example.org": ("Only in the portal: removed at Resend", ["remove_from_portal"]),
        "only-here@example.org": ("Only in the portal: never at Resend", ["add_at_provider"]),
    }


@pytest.mark.parametrize(
    ("email", "choice", "changed", "audited"),
    [
        (
            "removed-here@example.org",
            "remove_at_provider",
            "was removed from Resend’s suppression list",
            ("remove", "provider"),
        ),
        ("only-there@example.org", "add_to_portal", "was added to the portal’s suppression list", ("add", "portal")),
        (
            "only-there@example.org",
            "remove_at_provider",
            "was removed from Resend’s suppression list",
            ("remove", "provider"),
        ),
        (
            "removed-there@example.org",
            "remove_from_portal",
            "was removed from the portal’s suppression list",
            ("remove", "portal"),
        ),
        ("only-here@example.org", "add_at_provider", "was added to Resend’s suppression list", ("add", "provider")),
    ],
)
def test_each_offer_acts_once_and_is_audited(
    ctx, four_differences, provider_model, portal_list, admin, user_id, client, email, choice, changed, audited
):
    listed_before, there_before, audit_before = portal_list.keys(), at_resend(provider_model), audit(ctx)
    difference = difference_id(ctx, email)
    answer = offer(client, difference, choice)
    assert answer.status_code == 302
    assert f"{email} {changed}" in html.unescape(client.get(answer.location).get_data(as_text=True))

    portal_side = choice in ("add_to_portal", "remove_from_portal")
    added = choice.startswith("add")
    expected_portal = (listed_before | {email} if added else listed_before - {email}) if portal_side else listed_before
    expected_there = there_before if portal_side else (there_before | {email} if added else there_before - {email})
    assert (portal_list.keys(), at_resend(provider_model)) == (expected_portal, expected_there)
    assert audit(ctx) == [*audit_before, (email, *audited, "admin", user_id(admin))]
    assert email not in differences(ctx)

    again = offer(client, difference, choice)  # a second click, or a second admin
    assert again.status_code == 404
    assert "There is no such difference: it may have been acted on already. Nothing was changed." in html.unescape(
        again.get_data(as_text=True)
    )
    assert (portal_list.keys(), at_resend(provider_model), len(audit(ctx))) == (
        expected_portal,
        expected_there,
        len(audit_before) + 1,
    )


def test_bad_input_changes_nothing_and_says_why(ctx, four_differences, provider_model, portal_list, admin, client):
    state = (portal_list.keys(), at_resend(provider_model), audit(ctx), differences(ctx))
    unknown = offer(client, 999999, "remove_at_provider")
    assert unknown.status_code == 404
    assert "There is no such difference" in html.unescape(unknown.get_data(as_text=True))
    not_offered = offer(client, difference_id(ctx, "only-here@example.org"), "remove_from_portal")
    assert not_offered.status_code == 409
    assert "That is not offered for this difference. Nothing was changed." in html.unescape(
        not_offered.get_data(as_text=True)
    )
    assert offer(client, difference_id(ctx, "only-here@example.org"), "delete_everything").status_code == 400
    no_token = client.post(
        f"/admin/outbox/reconciliation/suppressions/{difference_id(ctx, 'only-here@example.org')}",
        data={"offer": "add_at_provider"},
    )
    assert no_token.status_code == 400
    provider_model.fail_next("http_500", path="/suppressions")
    failed = offer(client, difference_id(ctx, "removed-here@example.org"), "remove_at_provider")
    assert failed.status_code == 503
    assert "Nothing was changed: Resend answered with an error (500). Try again later." in html.unescape(
        failed.get_data(as_text=True)
    )
    assert (portal_list.keys(), at_resend(provider_model), audit(ctx), differences(ctx)) == state


def test_an_erased_person_is_shown_as_such_and_removed_at_resend_by_its_id(ctx, provider_model, admin, client):
    hashed = erase(ctx, "left@example.org", listed=False)
    provider_model.suppress("left@example.org")
    compare_suppressions(ctx, now=clock.utcnow())
    page = html.unescape(client.get(PAGE).get_data(as_text=True))
    assert "<em>an erased person</em>" in page
    assert "left@example.org" not in page and hashed not in page

    answer = offer(client, difference_id(ctx, hashed), "remove_at_provider")
    assert "An erased person was removed from Resend’s suppression list." in html.unescape(
        client.get(answer.location).get_data(as_text=True)
    )
    assert at_resend(provider_model) == set()
    assert [row[:3] for row in audit(ctx)] == [(hashed, "remove", "provider")]


def test_a_person_erased_after_the_pass_is_left_in_the_differences_as_the_hash(
    ctx, provider_model, actor, admin, client
):
    provider_model.suppress("only-there@example.org")
    compare_suppressions(ctx, now=clock.utcnow() - timedelta(hours=1))
    erase_person(ctx, address="only-there@example.org", actor_user_id=actor, now=clock.utcnow(), holds_data=True)
    hashed = address_hash("only-there@example.org", ctx.settings.secret_key)
    assert differences(ctx) == {hashed: NEVER_IN_PORTAL}
    page = html.unescape(client.get(PAGE).get_data(as_text=True))
    assert "only-there@example.org" not in page and "<em>an erased person</em>" in page
    compare_suppressions(ctx, now=clock.utcnow())  # Resend still lists the address: matched by the hash
    assert differences(ctx) == {hashed: NEVER_IN_PORTAL}
