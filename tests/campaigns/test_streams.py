"""Streams and topics (issue 49, part 2): a campaign is broadcast mail, sent from CAMPAIGN_FROM with
its own `stream` tag; it belongs to a topic its recipients may opt out of (one click per topic,
RFC 8058), or they may stop every campaign; neither ever touches transactional email."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from devtools.processes import stop_process
from devtools.testing import process_env
from portal.campaigns import operations, topics
from portal.campaigns.sending import campaign_pass

ROOT = Path(__file__).resolve().parents[2]
NEWS = "TEEI News <news@news.teei.example>"
EVERY = ["programme_news", "partner_news", "events"]


@pytest.fixture
def settings(settings):
    return settings.with_overrides(campaign_from=NEWS)


@pytest.fixture
def drain(settings, tmp_path):
    """drain(): one real `python worker.py --burst` (the email queue and the bulk queue), on the
    test's database, Redis and provider model, with CAMPAIGN_FROM set as a deployment sets it."""
    started = []

    def run():
        env = process_env(settings, tmp_path / "worker", EMAIL_FROM=settings.email_from, CAMPAIGN_FROM=NEWS)
        log = tmp_path / f"worker-{len(started)}.log"
        with log.open("w") as out:
            process = subprocess.Popen(
                [sys.executable, str(ROOT / "worker.py"), "--burst"], env=env, cwd=ROOT, stdout=out, stderr=out
            )
        started.append(process)
        process.wait(timeout=120)
        assert process.returncode == 0, log.read_text()

    yield run
    for process in started:
        stop_process(process)


def _user(db, email):
    with db.read() as conn:
        return conn.execute(sa.text("SELECT id FROM users WHERE email = :e"), {"e": email}).scalar_one()


def _tags(email) -> dict:
    return {tag["name"]: tag["value"] for tag in email["tags"]}


def _send(ctx, campaign):
    operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)
    campaign_pass(ctx)


def _written(outbox_rows, campaign):
    return {
        row["recipient"]: row["status"]
        for row in outbox_rows(family="campaign")
        if row["subject_ref"] == f"campaign:{campaign}"
    }


def test_campaigns_go_out_from_their_own_sender_with_the_broadcast_tag_over_real_workers(
    ctx, people, draft, make_outbox_row, provider_model, drain, settings
):
    company, emails = people(volunteers=2)
    _send(ctx, draft(f"company:{company}"))
    make_outbox_row(recipient=emails[1], family="notice", publish=True)
    drain()

    sent = provider_model.sent()
    campaign = [email for email in sent if _tags(email)["family"] == "campaign"]
    notice = [email for email in sent if _tags(email)["family"] == "notice"]
    assert len(campaign) == 3 and len(notice) == 1
    assert {email["from"] for email in campaign} == {NEWS}
    assert {_tags(email)["stream"] for email in campaign} == {"broadcast"}
    assert notice[0]["from"] == settings.email_from != NEWS, "transactional mail keeps EMAIL_FROM"
    assert _tags(notice[0])["stream"] == "transactional"


def test_the_test_send_shows_the_sender_its_recipients_will_see(
    ctx, admin, people, draft, client, form_token, outbox_rows, deliver, provider_model
):
    company, _ = people(volunteers=1)
    campaign = draft(f"company:{company}")
    client.post(f"/admin/campaigns/{campaign}/test", data=form_token(f"/admin/campaigns/{campaign}"))
    (row,) = outbox_rows(family="campaign_test")
    assert deliver(row["id"]) == "ack:sent"
    (email,) = provider_model.sent()
    assert email["from"] == NEWS and _tags(email)["stream"] == "broadcast"


def test_an_opt_out_of_one_topic_leaves_the_person_out_of_that_topic_only(ctx, people, draft, db, outbox_rows, count):
    company, emails = people(volunteers=1)
    me = _user(db, emails[1])
    operations.set_preferences(db, user_id=me, wanted={"programme_news", "events"}, no_campaigns=False)
    partner = draft(f"company:{company}", name="Partner news", topic="partner_news")
    events = draft(f"company:{company}", name="Events", topic="events")
    _send(ctx, partner)
    _send(ctx, events)
    assert emails[1] not in _written(outbox_rows, partner) and emails[0] in _written(outbox_rows, partner)
    assert emails[1] in _written(outbox_rows, events)
    with db.read() as conn:
        assert (
            conn.execute(sa.text("SELECT left_out_unsubscribed FROM campaigns WHERE id = :c"), {"c": partner}).scalar()
            == 1
        )


def test_an_opt_out_after_the_list_is_fixed_leaves_them_out_of_the_next_batch(ctx, people, draft, db, outbox_rows):
    company, emails = people(volunteers=2)
    campaign = draft(f"company:{company}", topic="events")
    operations.send(ctx, campaign_id=campaign, admin_id=1, send_at=None)  # the list is fixed: 3 people
    operations.set_preferences(db, user_id=_user(db, emails[2]), wanted={"programme_news"}, no_campaigns=False)
    campaign_pass(ctx)
    assert set(_written(outbox_rows, campaign)) == set(emails[:2])


def test_a_row_written_before_the_opt_out_is_left_out_at_send_time(
    ctx, people, draft, db, outbox_rows, deliver, provider_model
):
    company, emails = people(volunteers=1)
    events = draft(f"company:{company}", name="Events", topic="events")
    partner = draft(f"company:{company}", name="Partner news", topic="partner_news")
    _send(ctx, events)
    _send(ctx, partner)
    me = _user(db, emails[1])
    operations.set_preferences(db, user_id=me, wanted={"programme_news", "partner_news"}, no_campaigns=False)

    assert _written(outbox_rows, events) == {emails[0]: "enqueued", emails[1]: "cancelled"}
    assert _written(outbox_rows, partner) == {emails[0]: "enqueued", emails[1]: "enqueued"}
    for row in outbox_rows(family="campaign"):
        deliver(row["id"])
    got = sorted((email["to"][0], email["subject"]) for email in provider_model.sent())
    assert [to for to, _ in got].count(emails[1]) == 1, "their partner news only"
    cancelled = next(row for row in outbox_rows(family="campaign") if row["status"] == "cancelled")
    assert cancelled["recipient"] == emails[1] and cancelled["last_error"] == operations.UNSUBSCRIBE_REASON
    assert cancelled["provider_message_id"] is None


def test_a_row_held_by_a_delivery_is_stopped_before_its_request(
    ctx, people, draft, db, outbox_rows, deliver, provider_model
):
    """The opt-out lands while a delivery has claimed the row: the engine's own leave-out (the row was
    asked to stop) settles it before any provider call, without knowing campaigns or topics."""
    company, emails = people(volunteers=0)
    campaign = draft(f"company:{company}", topic="events")
    _send(ctx, campaign)
    (row,) = outbox_rows(family="campaign")
    with db.write() as conn:  # a delivery holds it: claimed, its claim not yet expired
        conn.execute(
            sa.text(
                "UPDATE email_outbox SET status = 'processing', claim_expires_at = '2999-01-01T00:00:00.000000Z' "
                "WHERE id = :id"
            ),
            {"id": row["id"]},
        )
    operations.set_preferences(db, user_id=_user(db, emails[0]), wanted=set(), no_campaigns=False)
    with db.read() as conn:
        asked = conn.execute(sa.text("SELECT cancel_requested_at FROM email_outbox WHERE id = :id"), {"id": row["id"]})
        assert asked.scalar() is not None, "asked to stop"
    assert provider_model.sent() == []


def test_no_campaigns_at_all_stops_every_topic_and_never_transactional_mail(
    ctx, people, draft, db, outbox_rows, make_outbox_row, deliver, provider_model
):
    company, emails = people(volunteers=1)
    me = _user(db, emails[1])
    operations.set_preferences(db, user_id=me, wanted=set(EVERY), no_campaigns=True)
    for topic in EVERY:
        campaign = draft(f"company:{company}", name=topic, topic=topic)
        _send(ctx, campaign)
        assert emails[1] not in _written(outbox_rows, campaign)
    assert deliver(make_outbox_row(recipient=emails[1], family="notice")) == "ack:sent"
    assert [email["to"] for email in provider_model.sent()] == [[emails[1]]]


def _link(ctx, db, email, campaign):
    from portal.campaigns.tokens import unsubscribe_url

    url = unsubscribe_url(ctx.settings.public_base_url, ctx.settings.secret_key, _user(db, email), campaign)
    return url.removeprefix(ctx.settings.public_base_url)


def test_one_click_stops_the_campaigns_topic_only(app, ctx, people, draft, db, count):
    company, emails = people(volunteers=1)
    campaign = draft(f"company:{company}", topic="partner_news")
    mail_client = app.test_client()
    answer = mail_client.post(_link(ctx, db, emails[1], campaign), data={"List-Unsubscribe": "One-Click"})
    assert answer.status_code == 200
    with db.read() as conn:
        assert topics.opted_out_of(conn, _user(db, emails[1])) == {"partner_news"}
    assert count("campaign_unsubscribes") == 0


def test_the_preference_page_shows_a_switch_per_topic_and_saves_them(app, ctx, people, draft, db, count):
    company, emails = people(volunteers=1)
    campaign = draft(f"company:{company}", topic="events")
    path = _link(ctx, db, emails[1], campaign)
    browser = app.test_client()
    page = browser.get(path).get_data(as_text=True)
    boxes = re.findall(r'<input type="checkbox"[^>]*name="topics" value="([a-z_]+)" checked>', page)
    assert boxes == EVERY, "every topic, each switched on"
    assert 'name="no_campaigns"' in page and "Unsubscribe from Events" in page
    assert count("campaign_topic_optouts") == 0, "looking changes nothing"

    token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page).group(1)
    saved = browser.post(f"{path}/preferences", data={"csrf_token": token, "topics": ["events"]})
    assert saved.status_code == 200
    with db.read() as conn:
        assert topics.opted_out_of(conn, _user(db, emails[1])) == {"programme_news", "partner_news"}
    after = saved.get_data(as_text=True)
    assert re.findall(r'name="topics" value="([a-z_]+)" checked', after) == ["events"]

    browser.post(f"{path}/preferences", data={"csrf_token": token, "topics": ["events"], "no_campaigns": "y"})
    assert count("campaign_unsubscribes") == 1
    browser.post(f"{path}/preferences", data={"csrf_token": token, "topics": EVERY})
    assert count("campaign_unsubscribes") == 0 and count("campaign_topic_optouts") == 0


def test_a_topic_not_on_the_list_refuses_the_whole_form(app, ctx, people, draft, db, count):
    company, emails = people(volunteers=1)
    campaign = draft(f"company:{company}")
    path = _link(ctx, db, emails[1], campaign)
    browser = app.test_client()
    token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', browser.get(path).get_data(as_text=True)).group(1)
    answer = browser.post(f"{path}/preferences", data={"csrf_token": token, "topics": ["programme_news", "gossip"]})
    assert answer.status_code == 400 and "no longer on the list" in answer.get_data(as_text=True)
    assert count("campaign_topic_optouts") == 0 and count("campaign_unsubscribes") == 0
    with pytest.raises(topics.TopicError):  # the operation checks too, in its write, for any caller
        operations.set_preferences(db, user_id=_user(db, emails[1]), wanted={"gossip"}, no_campaigns=True)
    assert count("campaign_topic_optouts") == 0 and count("campaign_unsubscribes") == 0


def test_the_campaign_form_takes_a_topic_and_refuses_one_not_on_the_list(client, admin, people, form_token, db, count):
    company, _ = people(volunteers=1)
    fields = {
        **form_token("/admin/campaigns/new"),
        "name": "Open day",
        "subject": "Come and see",
        "body": "Hello.",
        "audience": f"company:{company}",
    }
    assert client.post("/admin/campaigns/new", data={**fields, "topic": "gossip"}).status_code == 400
    assert count("campaigns") == 0
    answer = client.post("/admin/campaigns/new", data={**fields, "topic": "events"})
    assert answer.status_code == 303  # redirect after POST
    campaign = int(answer.headers["Location"].rsplit("/", 1)[1])
    assert "Events" in client.get(f"/admin/campaigns/{campaign}").get_data(as_text=True)
    without = client.post("/admin/campaigns/new", data=fields)  # CONTRACT.md's older list of fields
    assert without.status_code == 303  # redirect after POST
    with db.read() as conn:
        assert conn.execute(sa.text("SELECT topic FROM campaigns ORDER BY id")).scalars().all() == [
            "events",
            "programme_news",
        ]
    with pytest.raises(topics.TopicError):
        operations.create_campaign(
            db, admin_id=1, name="x", subject="y", body="z", audience=f"company:{company}", topic="gossip"
        )


def test_every_topic_has_words():
    assert set(topics.WORDS) == set(EVERY)


def test_the_seeded_topics_are_the_three_named(db):
    with db.read() as conn:
        assert topics.topic_codes(conn) == EVERY
