"""An erasure while an email to the person is at the provider: it counts as cancelled only the emails
it stopped, and says the one at the provider may still go out. With the provider model over HTTP
holding the request (a slow acceptance) and the real consumer delivering it in a thread."""

from __future__ import annotations

import threading

import pytest

from devtools.testing import wait_until
from portal.core import clock
from portal.privacy.operations import erase_person
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
