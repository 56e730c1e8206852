"""An erasure while an email to the person is at the provider: it counts as cancelled only the emails
it stopped, and says the one at the provider may still go out. With the provider model over HTTP
holding the request (a slow acceptance) and the real consumer delivering it in a thread.

Then an erasure while an email awaits its delivery receipt: the late receipt, bounce, complaint or
lookup stores no address, and the privacy page finds whatever still names it."""

from __future__ import annotations

import json
import threading

import pytest
import sqlalchemy as sa

from devtools.testing import wait_until
from portal.auth.queries import load_user
from portal.core import clock
from portal.core.pseudonyms import address_hash
from portal.invitations.operations import invite_colleagues
from portal.outbox.hear.receipt_lookup import look_up_missing_receipts
from portal.outbox.hear.receipts import apply_receipt_event
from portal.privacy.operations import erase_person
from tests.builders import event
from tests.pages import csrf_from


@pytest.fixture
def settings(settings, provider_model):
    return settings.with_overrides(resend_api_url=provider_model.url, provider_timeout_seconds=5)


@pytest.fixture
def one_at_the_provider(make_user, make_outbox_row, deliver, provider_model):
    """A person with two emails, the first held at the provider while `during` runs; returns
    (during's answer, the delivery's decisions)."""

    def run(during):
        person = make_user("employee", company="Acme Ltd")
        at_provider = make_outbox_row(recipient=person, publish=True)
        make_outbox_row(recipient=person, publish=True)  # waiting: the erasure stops it
        provider_model.fail_next("slow_accept", delay=2.0)
        decisions = []
        delivery = threading.Thread(target=lambda: decisions.append(deliver(at_provider)))
        delivery.start()
        try:
            held = lambda: any(entry["outcome"] == "in_flight" for entry in provider_model.requests())  # noqa: E731
            assert wait_until(held, timeout=10), "the first email is at the provider"
            answer = during(person)
        finally:
            delivery.join(timeout=30)
        return answer, decisions

    return run


def test_an_erasure_counts_only_the_emails_it_stopped(ctx, make_user, user_id, one_at_the_provider, provider_model):
    actor = user_id(make_user("admin"))
    erasure, decisions = one_at_the_provider(
        lambda person: erase_person(ctx, address=person, actor_user_id=actor, now=clock.utcnow(), holds_data=True)
    )
    assert decisions == ["ack:sent"] and len(provider_model.sent()) == 1, "the first email went out"
    assert (erasure.emails_cancelled, erasure.waiting_for, erasure.done) == (1, 1, False)


def test_the_admin_is_told_what_was_stopped_and_what_may_still_go_out(client, admin, one_at_the_provider):
    def erase(person):
        token = csrf_from(client.get("/admin/privacy").get_data(as_text=True))
        form = {"csrf_token": token, "email": person, "confirmed": "yes"}
        return client.post("/admin/privacy/erase", data=form, follow_redirects=True).get_data(as_text=True)

    said, decisions = one_at_the_provider(erase)
    assert decisions == ["ack:sent"]
    assert (
        "Nothing was erased yet: 1 email to this address was already with the provider, or on its way to it, "
        "and may still go out. Erase again in a minute. 1 email not yet sent was cancelled."
    ) in said


# After the provider accepted it, an email to the person awaits its delivery receipt: the erasure
# goes ahead (nothing more will be sent), and the receipt, or the worker's lookup, comes later.


@pytest.fixture
def erased_awaiting_receipt(ctx, make_user, user_id, accepted_long_ago):
    """A volunteer whose email the provider accepted 49 hours ago, its receipt never come, erased
    now; returns (address, the email's row ID, the pseudonym)."""
    person = make_user("employee", company="Acme Ltd", email="late.receipt@acme.example")
    outbox_id = accepted_long_ago(person)
    erasure = erase_person(
        ctx, address=person, actor_user_id=user_id(make_user("admin")), now=clock.utcnow(), holds_data=True
    )
    assert erasure.done
    return person, outbox_id, erasure.pseudonym


@pytest.fixture
def accepted_long_ago(ctx, make_outbox_row, deliver):
    def make(recipient: str) -> str:
        outbox_id = make_outbox_row(recipient=recipient, publish=True)
        assert deliver(outbox_id) == "ack:sent"
        with ctx.db.write() as conn:
            conn.execute(
                sa.text("UPDATE email_outbox SET sent_at = :then WHERE id = :id"),
                {"id": outbox_id, "then": clock.iso_in(-49 * 3600)},
            )
        return outbox_id

    return make


def late_receipt(ctx, outbox_id, receipt_type, to, **data):
    with ctx.db.read() as conn:
        message_id = conn.execute(
            sa.text("SELECT provider_message_id FROM email_outbox WHERE id = :id"), {"id": outbox_id}
        ).scalar()
    body = event(
        receipt_type, email_id=message_id, to=to, created_at=clock.iso(clock.utcnow()), outbox_id=outbox_id, **data
    )
    return apply_receipt_event(
        ctx.db, f"msg_late_{receipt_type}", json.dumps(body).encode(), environment="development", now=clock.utcnow()
    )


def held_anywhere(ctx, address: str) -> list[str]:
    """The email tables' rows that still name `address`, as 'table: row'."""
    found = []
    with ctx.db.read() as conn:
        for table in ("email_receipts", "email_suppressions", "email_suppression_events", "email_lookups"):
            for row in conn.execute(sa.text(f"SELECT * FROM {table}")).all():
                if address in repr(tuple(row)):
                    found.append(f"{table}: {tuple(row)}")
    return found


def test_a_late_delivery_receipt_for_an_erased_email_stores_no_address(ctx, erased_awaiting_receipt):
    person, outbox_id, pseudonym = erased_awaiting_receipt
    assert late_receipt(ctx, outbox_id, "email.delivered", person) == "applied"
    assert held_anywhere(ctx, person) == []
    with ctx.db.read() as conn:
        kept = json.loads(conn.execute(sa.text("SELECT payload FROM email_receipts")).scalar())
    assert kept["to"] is None and kept["type"] == "email.delivered"  # the rest is kept, as for anyone


@pytest.mark.parametrize(
    ("receipt_type", "data"), [("email.complained", {}), ("email.bounced", {"bounce": {"type": "Permanent"}})]
)
def test_a_late_bounce_or_complaint_suppresses_the_keyed_hash_not_the_address(
    ctx, erased_awaiting_receipt, count, make_user, user_id, receipt_type, data
):
    person, outbox_id, _pseudonym = erased_awaiting_receipt
    late_receipt(ctx, outbox_id, receipt_type, person, **data)
    assert held_anywhere(ctx, person) == []
    hashed = address_hash(person, ctx.settings.secret_key)
    assert count("email_suppressions", "email = :h", h=hashed) == 1
    assert count("email_suppression_events", "email = :h", h=hashed) == 1
    # ...and it still holds: the address given again is refused, as after any erasure.
    manager = load_user(ctx.db, user_id(make_user("manager", company="Acme Ltd")))
    invite_colleagues(ctx, manager=manager, addresses=[person], programme="language")
    assert count("email_suppressions", "email = :a", a=person) == 1
    # Erased again: the plain entry becomes the hash once more, beside the one already there.
    erasure = erase_person(ctx, address=person, actor_user_id=manager.id, now=clock.utcnow(), holds_data=True)
    assert erasure.done and count("email_suppressions", "email IN (:a, :h)", a=person, h=hashed) == 1


def test_a_late_lookup_for_an_erased_email_stores_no_address(ctx, erased_awaiting_receipt):
    person, outbox_id, _pseudonym = erased_awaiting_receipt
    result = look_up_missing_receipts(ctx, now=clock.utcnow())
    assert (result.asked, result.learned) == (1, 1)  # the provider model answers `delivered`, to the address
    with ctx.db.read() as conn:
        assert (
            conn.execute(sa.text("SELECT source FROM email_receipts WHERE outbox_id = :id"), {"id": outbox_id}).scalar()
            == "lookup"
        )
    assert held_anywhere(ctx, person) == []


def test_the_privacy_page_finds_a_receipt_that_still_names_an_erased_address_and_erases_it(
    ctx, client, admin, erased_awaiting_receipt
):
    """A receipt stored with the address before receipts about erased emails were kept without it."""
    person, outbox_id, pseudonym = erased_awaiting_receipt
    late_receipt(ctx, outbox_id, "email.delivered", person)
    with ctx.db.write() as conn:  # as an earlier release stored it
        conn.execute(sa.text("UPDATE email_receipts SET payload = json_set(payload, '$.to', :a)"), {"a": person})
    token = csrf_from(client.get("/admin/privacy").get_data(as_text=True))
    found = client.post("/admin/privacy", data={"email": person, "csrf_token": token}).get_data(as_text=True)
    assert "holds nothing" not in found
    client.post("/admin/privacy/erase", data={"email": person, "csrf_token": token, "confirmed": "yes"})
    assert held_anywhere(ctx, person) == []
    with ctx.db.read() as conn:  # erased again under the same pseudonym: the rows still join
        recorded = conn.execute(sa.text("SELECT pseudonym FROM privacy_events WHERE action = 'erase'")).scalars()
        assert recorded.all() == [pseudonym, pseudonym]
        assert conn.execute(sa.text("SELECT pseudonym FROM erased_addresses")).scalars().all() == [pseudonym]


def test_a_late_bounce_for_an_email_erased_with_no_hash_recorded_suppresses_nothing(ctx, make_outbox_row, count):
    """A row erased before erasures recorded the address's hash (or blanked by retention): the portal
    cannot key the address, and does not write it back."""
    for recipient in ("erased-0123456789ab@erased.invalid", ""):
        outbox_id = make_outbox_row(status="sent", provider_message_id=f"re_old_{len(recipient)}")
        with ctx.db.write() as conn:
            conn.execute(
                sa.text("UPDATE email_outbox SET recipient = :r WHERE id = :id"), {"r": recipient, "id": outbox_id}
            )
        body = event(
            "email.bounced",
            email_id=f"re_old_{len(recipient)}",
            to="long.gone@acme.example",
            outbox_id=outbox_id,
            bounce={"type": "Permanent"},
        )
        apply_receipt_event(
            ctx.db,
            f"msg_old_{len(recipient)}",
            json.dumps(body).encode(),
            environment="development",
            now=clock.utcnow(),
        )
    assert count("email_suppressions") == count("email_suppression_events") == 0
    assert held_anywhere(ctx, "long.gone@acme.example") == []
