"""The operator's console over HTTP: the list, one email's history, and the audited actions, against a
real database, Redis and the provider model."""

from __future__ import annotations

import html
import re

import sqlalchemy as sa

from portal.core import clock
from portal.outbox.ground.queues import email_queue
from tests.pages import csrf_from


def csrf(client, path):
    return csrf_from(client.get(path).get_data(as_text=True))


def act(client, outbox_id, **form):
    token = csrf(client, f"/admin/outbox/{outbox_id}")
    return client.post(f"/admin/outbox/{outbox_id}/action", data={"csrf_token": token, **form})


def operator_events(db, outbox_id):
    with db.read() as conn:
        return [
            dict(row)
            for row in conn.execute(
                sa.text(
                    "SELECT e.*, u.email AS actor FROM email_outbox_events e LEFT JOIN users u ON u.id = e.actor_user_id "
                    "WHERE e.outbox_id = :id AND e.kind = 'operator' ORDER BY e.id"
                ),
                {"id": outbox_id},
            ).mappings()
        ]


def test_only_admins_reach_the_console(client, auth, make_user, make_outbox_row):
    outbox_id = make_outbox_row()
    assert client.get("/admin/outbox/").status_code == 302  # to the sign-in page
    auth.login(make_user("manager"))
    assert client.get("/admin/outbox/").status_code == 403
    assert client.get(f"/admin/outbox/{outbox_id}").status_code == 403
    assert client.post(f"/admin/outbox/{outbox_id}/action", data={"action": "cancel", "reason": "x"}).status_code in (
        400,
        403,
    )


def test_counts_link_to_the_filtered_list(client, admin, make_outbox_row):
    make_outbox_row(status="dead_letter", provider_message_id=None, recipient="dead@example.org")
    make_outbox_row(status="dead_letter", provider_message_id=None, recipient="dead2@example.org")
    make_outbox_row(recipient="waiting@example.org")
    page = client.get("/admin/outbox/").get_data(as_text=True)
    link = re.search(r'href="(/admin/outbox/\?[^"]*status=dead_letter[^"]*)"[^>]*>2<', page.replace("&amp;", "&"))
    assert link, "the dead letters' count links to their list"
    listed = client.get(link.group(1)).get_data(as_text=True)
    assert "dead@example.org" in listed and "dead2@example.org" in listed and "waiting@example.org" not in listed


def test_filters_by_recipient_family_and_time(client, admin, make_outbox_row, ctx):
    make_outbox_row(recipient="ada@example.org")
    make_outbox_row(
        recipient="adam@example.org",
        created_at="2026-01-05T10:00:00.000000Z",
        status="sent",
        provider_message_id="re_a",
    )
    make_outbox_row(recipient="bob@example.org")

    found = client.get("/admin/outbox/?q=ADA").get_data(as_text=True)
    assert "ada@example.org" in found and "adam@example.org" in found and "bob@example.org" not in found
    january = client.get("/admin/outbox/?q=ada&created_from=2026-01-01&created_to=2026-01-31").get_data(as_text=True)
    assert "adam@example.org" in january and "ada@example.org</td>" not in january
    assert "No email matches" in client.get("/admin/outbox/?family=report").get_data(as_text=True)
    bad = client.get("/admin/outbox/?created_from=2026-02-01&created_to=2026-01-01")
    assert bad.status_code == 400 and "must not be before" in bad.get_data(as_text=True)


def test_pages_by_key_reach_every_row_once(client, admin, make_outbox_row):
    # Two rows per moment: the page boundary falls between rows created at the same time.
    ids = set()
    for n in range(60):
        ids.add(
            make_outbox_row(
                created_at=f"2026-03-01T10:00:{(n + 1) // 2:02d}.000000Z", status="sent", provider_message_id=f"re_{n}"
            )
        )
    seen, path = [], "/admin/outbox/?status=sent"
    for _ in range(5):  # 60 rows are two pages; a cursor that went nowhere would loop
        if path is None:
            break
        page = client.get(path).get_data(as_text=True)
        seen += re.findall(r'href="/admin/outbox/(ntc_[0-9a-f]+)"', page)
        older = re.search(r'href="([^"]+)" rel="next"', page)
        path = older.group(1).replace("&amp;", "&") if older else None
    assert len(seen) == len(set(seen)) == 60 and set(seen) == ids


def test_confirm_sent_settles_the_row_and_records_who_why_and_the_states(
    client, admin, unknown_outcome, outbox_row, ctx
):
    outbox_id = unknown_outcome()
    response = act(client, outbox_id, action="confirm_sent", reason="Found it in the Resend dashboard")
    assert response.status_code == 302

    row = outbox_row(outbox_id)
    assert row["status"] == "sent" and row["outcome_unknown"] == 0
    (event,) = operator_events(ctx.db, outbox_id)
    assert (event["action"], event["actor"], event["reason"]) == (
        "confirm_sent",
        admin,
        "Found it in the Resend dashboard",
    )
    assert (event["status_before"], event["status_after"]) == ("dead_letter", "sent")
    page = client.get(f"/admin/outbox/{outbox_id}").get_data(as_text=True)
    assert "Confirmed as sent by an operator" in page and "Found it in the Resend dashboard" in page


def test_an_action_without_a_reason_changes_nothing(client, admin, unknown_outcome, outbox_row, ctx):
    outbox_id = unknown_outcome()
    response = act(client, outbox_id, action="confirm_sent", reason="  ")
    assert response.status_code == 400 and "Say why" in response.get_data(as_text=True)
    assert outbox_row(outbox_id)["status"] == "dead_letter" and operator_events(ctx.db, outbox_id) == []


def test_ask_the_provider_finds_the_email_by_its_outbox_tag(
    client, admin, unknown_outcome, provider_model, ctx, make_outbox_row, deliver
):
    assert deliver(make_outbox_row(recipient="bob@example.org")) == "ack:sent"
    outbox_id = unknown_outcome(recipient="ada@example.org")
    (sent,) = [e for e in provider_model.sent() if e["to"] == ["ada@example.org"]]  # the lost answer's email
    # A later email to the same person: the lookup tells the two apart by the outbox_id tag.
    assert deliver(make_outbox_row(recipient="ada@example.org")) == "ack:sent"

    token = csrf(client, f"/admin/outbox/{outbox_id}")
    page = client.post(f"/admin/outbox/{outbox_id}/ask-provider", data={"csrf_token": token}).get_data(as_text=True)
    assert "The provider has this email" in page and sent["id"] in page
    assert f'value="{sent["id"]}"' in page, "its message ID is filled in for the confirmation"

    act(client, outbox_id, action="confirm_sent", reason="The provider has it", message_id=sent["id"])
    with ctx.db.read() as conn:
        assert (
            conn.execute(
                sa.text("SELECT provider_message_id FROM email_outbox WHERE id = :id"), {"id": outbox_id}
            ).scalar()
            == sent["id"]
        )


def test_ask_the_provider_says_when_it_has_no_such_email(client, admin, unknown_outcome, provider_model):
    outbox_id = unknown_outcome(lost_after_accept=False)  # a 500: nothing went out
    assert provider_model.sent() == []
    token = csrf(client, f"/admin/outbox/{outbox_id}")
    page = client.post(f"/admin/outbox/{outbox_id}/ask-provider", data={"csrf_token": token}).get_data(as_text=True)
    assert "The provider has no email with this outbox ID" in page


def test_ask_the_provider_waits_its_turn_behind_sending(client, admin, unknown_outcome, ctx, monkeypatch):
    import time

    from portal.outbox.hear import lookup
    from portal.outbox.send.rate_limit import rate_limit_for

    outbox_id = unknown_outcome(lost_after_accept=False)
    slots = rate_limit_for(ctx.redis, ctx.settings.redis_url, ctx.settings.resend_rate_limit_per_second)
    token = csrf(client, f"/admin/outbox/{outbox_id}")
    while slots.acquire(time.monotonic()):  # the workers hold this second's every slot
        pass
    monkeypatch.setattr(lookup, "LOOKUP_WAIT_SECONDS", 0)
    page = client.post(f"/admin/outbox/{outbox_id}/ask-provider", data={"csrf_token": token}).get_data(as_text=True)
    assert "The provider was not asked: sending is using the whole provider rate limit right now" in page


def test_send_again_needs_the_duplicate_confirmation_and_writes_a_new_email(
    client, admin, unknown_outcome, outbox_row, outbox_rows, ctx
):
    outbox_id = unknown_outcome(lost_after_accept=False)
    refused = act(client, outbox_id, action="send_again", reason="The provider never got it")
    assert refused.status_code == 400 and "receive it twice" in refused.get_data(as_text=True)
    assert len(outbox_rows()) == 1

    act(client, outbox_id, action="send_again", reason="The provider never got it", confirm_duplicate="y")
    old = outbox_row(outbox_id)
    (new,) = [r for r in outbox_rows() if r["id"] != outbox_id]
    assert old["status"] == "dead_letter" and old["last_error"] == "sent_again"
    assert new["idempotency_key"] != old["idempotency_key"] and new["recipient"] == old["recipient"]
    assert new["template_input"] == old["template_input"] and new["status"] == "enqueued"
    (event,) = operator_events(ctx.db, outbox_id)
    assert event["related_outbox_id"] == new["id"]

    again = act(client, outbox_id, action="send_again", reason="twice?", confirm_duplicate="y")
    assert again.status_code == 409 and len(outbox_rows()) == 2, "a row is sent again at most once"


def test_retry_only_where_nothing_was_sent_and_under_the_same_key(
    client, admin, make_outbox_row, unknown_outcome, outbox_row, ctx, redis_server
):
    failed = make_outbox_row(
        status="failed", provider_message_id=None, last_error="provider_rejected: 422 validation_error", attempt_count=1
    )
    key = outbox_row(failed)["idempotency_key"]
    assert act(client, failed, action="retry", reason="Template fixed").status_code == 302
    row = outbox_row(failed)
    assert row["status"] == "enqueued" and row["idempotency_key"] == key and row["attempt_count"] == 0
    assert failed in [job.args[0]["outboxId"] for job in email_queue(ctx.redis).jobs], "published after the commit"

    maybe_sent = unknown_outcome()
    refused = act(client, maybe_sent, action="retry", reason="try again")
    assert refused.status_code == 409 and outbox_row(maybe_sent)["status"] == "dead_letter"


def test_cancel_only_while_nothing_can_have_gone_out(client, admin, make_outbox_row, unknown_outcome, outbox_row):
    waiting = make_outbox_row()
    assert act(client, waiting, action="cancel", reason="Sent by mistake").status_code == 302
    assert outbox_row(waiting)["status"] == "cancelled"

    # Released after a wait for a rate slot: attempted, but nothing reached the provider.
    waited = make_outbox_row(status="retry", provider_message_id=None, first_attempt_at=clock.now_iso())
    assert act(client, waited, action="cancel", reason="Stop it").status_code == 302
    assert outbox_row(waited)["status"] == "cancelled"

    maybe_sent = make_outbox_row(
        status="retry", provider_message_id=None, first_attempt_at=clock.now_iso(), outcome_unknown=1
    )
    assert act(client, maybe_sent, action="cancel", reason="Stop it").status_code == 409
    assert outbox_row(maybe_sent)["status"] == "retry"


def bulk(client, action, expected_count=None, **filters):
    token = csrf(client, "/admin/outbox/")
    data = {"csrf_token": token, "action": action, **filters}
    if expected_count is None:
        return client.post("/admin/outbox/bulk/confirm", data=data)
    return client.post(
        "/admin/outbox/bulk", data={**data, "reason": "Campaign sent twice", "expected_count": expected_count}
    )


def test_an_action_over_a_filtered_list_confirms_the_count_first(client, admin, make_outbox_row, outbox_rows):
    for n in range(3):
        make_outbox_row(recipient=f"list{n}@example.org")
    make_outbox_row(recipient="other@example.org")
    make_outbox_row(recipient="list9@example.org", status="sent")

    confirm = bulk(client, "cancel", q="list").get_data(as_text=True)
    assert "Cancel: 3 emails?" in confirm and 'name="expected_count" type="hidden" value="3"' in confirm
    assert {r["status"] for r in outbox_rows()} == {"pending", "sent"}, "nothing changes before the confirmation"

    make_outbox_row(recipient="list7@example.org")  # the list grows meanwhile
    changed = bulk(client, "cancel", expected_count="3", q="list")
    assert changed.status_code == 409 and "4 emails match now" in changed.get_data(as_text=True)
    assert all(r["status"] != "cancelled" for r in outbox_rows())

    assert bulk(client, "cancel", expected_count="4", q="list").status_code == 302
    statuses = {r["recipient"]: r["status"] for r in outbox_rows()}
    assert statuses == {
        "list0@example.org": "cancelled",
        "list1@example.org": "cancelled",
        "list2@example.org": "cancelled",
        "list7@example.org": "cancelled",
        "other@example.org": "pending",
        "list9@example.org": "sent",
    }


def test_sending_a_list_again_needs_the_duplicate_confirmation(client, admin, unknown_outcome, outbox_rows):
    unknown_outcome(recipient="one@example.org", lost_after_accept=False)
    unknown_outcome(recipient="two@example.org", lost_after_accept=False)
    confirm = bulk(client, "send_again", status="dead_letter").get_data(as_text=True)
    assert "Send again as a new email: 2 emails?" in confirm and "receive this email twice" in confirm

    refused = bulk(client, "send_again", expected_count="2", status="dead_letter")
    assert refused.status_code == 400 and len(outbox_rows()) == 2
    token = csrf(client, "/admin/outbox/")
    done = client.post(
        "/admin/outbox/bulk",
        data={
            "csrf_token": token,
            "action": "send_again",
            "status": "dead_letter",
            "reason": "Neither went out",
            "expected_count": "2",
            "confirm_duplicate": "y",
        },
    )
    assert done.status_code == 302
    assert sorted(r["recipient"] for r in outbox_rows(status="enqueued")) == ["one@example.org", "two@example.org"]


def test_an_unknown_filter_is_refused_not_read_as_any(client, admin, make_outbox_row, outbox_rows):
    make_outbox_row()
    listed = client.get("/admin/outbox/?status=lost")
    assert listed.status_code == 400 and "Choose one of the values offered" in listed.get_data(as_text=True)
    assert bulk(client, "cancel", status="lost").status_code == 400
    assert bulk(client, "cancel", expected_count="1", family="nonsense").status_code == 400
    # No action, or one the page does not offer: a clear refusal, not a 500.
    assert bulk(client, "", expected_count="1").status_code == 400
    assert bulk(client, "delete_everything", expected_count="1").status_code == 400
    # A day past what the calendar can count on from.
    far = client.get("/admin/outbox/?created_to=9999-12-31")
    assert far.status_code == 400 and "between 2000 and 2100" in far.get_data(as_text=True)
    assert bulk(client, "cancel", expected_count="1", created_to="9999-12-31").status_code == 400
    assert [r["status"] for r in outbox_rows()] == ["pending"]


def test_the_list_answers_at_the_contracts_path_without_a_redirect(client, admin, make_outbox_row):
    make_outbox_row(recipient="ada@example.org")
    for path in ("/admin/outbox?status=pending", "/admin/outbox/?status=pending"):
        page = client.get(path)
        assert page.status_code == 200 and "ada@example.org" in page.get_data(as_text=True), path


def test_a_batched_emails_page_shows_its_batch_its_requests_and_what_a_person_may_still_do(
    client, admin, ctx, provider_model, deliver, make_due
):
    from tests.outbox.test_batch_delivery import batch_of, campaign_rows, publish

    ids = campaign_rows(ctx, 3)
    publish(ctx, ids)
    before = client.get(f"/admin/outbox/{ids[1]}").get_data(as_text=True)
    assert "Sent in a batch" in before and "position 2 of 3" in before
    assert "No request has been made yet" in before and "No request yet." in before
    assert 'value="cancel"' in before, "before its first request, a member can still leave"

    provider_model.fail_next("http_500", path="/emails/batch")
    assert deliver(ids[0]).startswith("retry:")
    sealed = client.get(f"/admin/outbox/{ids[1]}").get_data(as_text=True)
    assert "its list is frozen" in sealed
    assert "500: provider_error: 500 application_error" in sealed, "the first request's answer"
    assert 'value="cancel"' not in sealed and 'value="retry"' not in sealed
    refused = act(client, ids[1], action="cancel", reason="Sent by mistake")
    assert refused.status_code == 409
    assert "nothing can have been sent" in refused.get_data(as_text=True)

    for outbox_id in ids:
        make_due(outbox_id)
    assert deliver(ids[0], attempt=2) == "ack:sent"
    settled = client.get(f"/admin/outbox/{ids[1]}").get_data(as_text=True)
    assert "The batch is settled" in settled
    assert "accepted: 3 message IDs" in settled, "the second request's answer"
    with ctx.db.read() as conn:
        key = conn.execute(
            sa.text("SELECT provider_key FROM email_batches WHERE id = :b"), {"b": batch_of(ctx.db, ids[1])}
        ).scalar()
    assert key in settled


def test_times_and_day_filters_are_in_the_portal_zone_named(client, admin, make_outbox_row):
    # 23:30 UTC on 31 January is already 1 February in Oslo (PORTAL_TIMEZONE's default).
    make_outbox_row(
        recipient="late@example.org",
        created_at="2026-01-31T23:30:00.000000Z",
        status="sent",
        provider_message_id="re_l",
    )

    february = client.get("/admin/outbox/?created_from=2026-02-01&created_to=2026-02-28").get_data(as_text=True)
    assert "late@example.org" in february and "1 Feb 2026, 00:30 CET" in february
    assert "Days and times are in Europe/Oslo" in february
    january = client.get("/admin/outbox/?created_from=2026-01-01&created_to=2026-01-31").get_data(as_text=True)
    assert "late@example.org" not in january


def test_days_are_typed_day_first_or_year_first(client, admin, make_outbox_row):
    make_outbox_row(
        recipient="march@example.org",
        created_at="2026-03-15T12:00:00.000000Z",
        status="sent",
        provider_message_id="re_m",
    )
    for typed in ({"created_from": "01.03.2026", "created_to": "31.03.2026"}, {"created_from": "2026-03-01"}):
        page = client.get("/admin/outbox/", query_string=typed).get_data(as_text=True)
        assert "march@example.org" in page and 'type="date"' not in page


def test_an_emails_page_shows_the_email_itself_while_it_is_kept_and_says_when_it_went(
    client, admin, make_outbox_row, provider_model, deliver, make_due, auth, make_user
):
    data = {"subject": "Your place in TEEI Language", "body": "Hello Ada.\n\nYour first session is on Monday."}
    outbox_id = make_outbox_row(recipient="ada@example.org", data=data, publish=True)
    page = client.get(f"/admin/outbox/{outbox_id}").get_data(as_text=True)
    assert "Not made yet" in page and "<iframe" not in page  # rendered and frozen at its first attempt

    provider_model.fail_next("http_500")  # the first attempt freezes it; the provider says try again
    assert deliver(outbox_id).startswith("retry:")
    page = client.get(f"/admin/outbox/{outbox_id}").get_data(as_text=True)
    facts = dict(re.findall(r"<dt>([^<]+)</dt><dd>(.*?)</dd>", page))
    assert facts["Subject"] == "Your place in TEEI Language"
    assert facts["From"] and "@" in facts["From"] and facts["Attachment"] == "none"
    assert facts["Tags"] == "template: notice · template_version: 1 · stream: transactional"
    assert f'sandbox src="/admin/outbox/{outbox_id}/content"' in page
    assert "Your first session is on Monday." in page  # the plain-text version, one click away

    framed = client.get(f"/admin/outbox/{outbox_id}/content")
    assert framed.status_code == 200 and "Your first session is on Monday." in framed.get_data(as_text=True)
    policy = framed.headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "sandbox" in policy and "frame-ancestors 'self'" in policy
    assert "script-src" not in policy and framed.headers["X-Frame-Options"] == "SAMEORIGIN"
    auth.logout()
    auth.login(make_user("manager"))
    assert client.get(f"/admin/outbox/{outbox_id}/content").status_code == 403
    auth.logout()
    auth.login(admin)

    make_due(outbox_id)
    assert deliver(outbox_id, attempt=2) == "ack:sent"
    page = client.get(f"/admin/outbox/{outbox_id}").get_data(as_text=True)
    assert "Its content was deleted when the provider accepted it" in page and "<iframe" not in page
    # A frame loaded after the email went says so, in a page of its own: no menus inside the frame.
    gone = client.get(f"/admin/outbox/{outbox_id}/content")
    assert gone.status_code == 404 and "Reload the page to see what happened" in gone.get_data(as_text=True)
    assert "<nav" not in gone.get_data(as_text=True) and "<a " not in gone.get_data(as_text=True)
    assert "sandbox" in gone.headers["Content-Security-Policy"]
    history = re.findall(r'<p class="timeline-title">([^<]+)</p>', page)
    assert history[-1] == "Handed to Resend" and "Not sent this time; it will be tried again" in history


def test_what_an_email_is_about_links_to_its_page(client, admin, make_outbox_row, db):
    outbox_id = make_outbox_row()
    with db.write() as conn:
        conn.execute(sa.text("UPDATE email_outbox SET subject_ref = 'application:7' WHERE id = :id"), {"id": outbox_id})
    page = client.get(f"/admin/outbox/{outbox_id}").get_data(as_text=True)
    assert '<a href="/admin/applications/7">Partner application 7</a>' in page
    with db.write() as conn:
        conn.execute(
            sa.text("UPDATE email_outbox SET subject_ref = 'password-reset:3' WHERE id = :id"), {"id": outbox_id}
        )
    page = client.get(f"/admin/outbox/{outbox_id}").get_data(as_text=True)
    assert "<dd>Password reset 3</dd>" in page  # no page to link to


def test_the_tokens_in_an_emails_links_are_masked_on_the_console(
    client, admin, make_outbox_row, provider_model, deliver
):
    link = "https://portal.example/password/reset/Zk3-secret-token-9Q"
    data = {"subject": "Reset your password", "body": f"Choose a new password: {link}"}
    outbox_id = make_outbox_row(recipient="ada@example.org", data=data, publish=True)
    provider_model.fail_next("http_500")
    assert deliver(outbox_id).startswith("retry:")
    page = client.get(f"/admin/outbox/{outbox_id}").get_data(as_text=True)
    framed = client.get(f"/admin/outbox/{outbox_id}/content").get_data(as_text=True)
    for shown in (page, framed):
        assert "Zk3-secret-token-9Q" not in shown and "/password/reset/[token]" in shown


def test_the_list_says_what_the_outbox_keeps_and_when_it_goes(client, admin, make_outbox_row, provider_model, deliver):
    outbox_id = make_outbox_row(publish=True)
    provider_model.fail_next("http_500")
    assert deliver(outbox_id).startswith("retry:")  # its content is frozen until it is sent
    page = client.get("/admin/outbox/").get_data(as_text=True)
    kept = html.unescape(page[page.index("What the outbox keeps") : page.index("Find emails")])
    rows = re.findall(
        r'<th scope="row">([^<]+)<span.*?<td class="num">([^<]+)</td>\s*<td>([^<]+)</td>\s*<td>([^<]+)</td>', kept, re.S
    )
    assert [(what, count) for what, count, _, _ in rows] == [
        ("Frozen email contents", "1"),
        ("Receipt bodies", "0"),
        ("Settled emails' recipients and inputs", "0"),
    ]
    assert rows[0][3].strip() == "when it is sent" and rows[1][2:] == ("—", "—")


def test_a_settled_emails_page_says_its_content_went_when_it_settled(client, admin, make_outbox_row):
    tried = make_outbox_row(status="failed", provider_message_id=None, first_attempt_at=clock.now_iso())
    never = make_outbox_row(status="cancelled", provider_message_id=None)
    assert "Its content went when the email settled (failed)" in client.get(f"/admin/outbox/{tried}").get_data(
        as_text=True
    )
    assert "It settled (cancelled) before its first attempt" in client.get(f"/admin/outbox/{never}").get_data(
        as_text=True
    )
