"""The delivery reconciliation: each day's committed emails counted once by what became of them,
checked against a count made here from the rows as they were written; its page, CSV and command."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import uuid
from collections import Counter
from datetime import date, datetime, time, timedelta

import pytest

from portal.core import clock
from portal.core.periods import report_timezone
from portal.outbox.hear.receipts import apply_receipt_event
from portal.outbox.hear.reconciliation import FIGURES, PARTITION, reconcile
from tests.builders import event

DAY = date(2026, 11, 20)
NOW = datetime(2026, 11, 23, 12, 0, tzinfo=clock.UTC)
HOURS = 48

# (family, day, local time, what the row is, the figure it must count under)
ROWS = [
    ("notice", DAY, time(0, 30), {"status": "delivered"}, "delivered"),  # 23:30 UTC the day before
    ("notice", DAY, time(9), {"status": "sent", "sent_hours_ago": 49}, "no_receipt"),
    ("notice", DAY, time(9), {"status": "sent", "sent_hours_ago": 10}, "awaiting_receipt"),
    ("notice", DAY, time(10), {"status": "sent", "sent_hours_ago": 60, "receipt": "delayed"}, "delayed"),
    ("notice", DAY, time(11), {"status": "sent", "sent_hours_ago": 60, "receipt": "transient"}, "bounced"),
    ("notice", DAY, time(12), {"status": "bounced"}, "bounced"),
    ("campaign", DAY, time(13), {"status": "complained"}, "complained"),
    ("campaign", DAY, time(14), {"status": "failed", "provider_message_id": None}, "failed"),
    ("campaign", DAY, time(15), {"status": "suppressed", "provider_message_id": None}, "suppressed"),
    (
        "notice",
        DAY,
        time(16),
        {"status": "dead_letter", "provider_message_id": None, "outcome_unknown": 1, "last_error": "unknown_outcome"},
        "unknown_outcome",
    ),
    (  # an operator sent it again as a new email: settled by a person, no longer unknown
        "notice",
        DAY,
        time(16, 30),
        {"status": "dead_letter", "provider_message_id": None, "outcome_unknown": 1, "last_error": "sent_again"},
        "stopped",
    ),
    (
        "notice",
        DAY,
        time(17),
        {"status": "dead_letter", "provider_message_id": None, "last_error": "delivery_exhausted"},
        "stopped",
    ),
    ("campaign", DAY, time(18), {"status": "cancelled", "provider_message_id": None}, "stopped"),
    ("notice", DAY, time(23, 59), {"status": "retry", "provider_message_id": None}, "in_flight"),
    ("notice", DAY - timedelta(days=1), time(23, 59), {"status": "delivered"}, "delivered"),
    ("notice", DAY + timedelta(days=1), time(0, 0), {"status": "sent", "sent_hours_ago": 70}, "no_receipt"),
]


@pytest.fixture
def written(ctx, make_outbox_row):
    """The rows of ROWS, created at their local times; returns {outbox_id: (family, day, figure, accepted)}."""
    zone = report_timezone(ctx.settings)
    written = {}
    for n, (family, day, at, state, figure) in enumerate(ROWS):
        state = dict(state)
        receipt = state.pop("receipt", None)
        sent_hours_ago = state.pop("sent_hours_ago", 72)
        message_id = state.pop("provider_message_id", f"re_rec_{n}")
        created = clock.iso(datetime.combine(day, at, tzinfo=zone))
        columns = {
            **state,
            "provider_message_id": message_id,
            "created_at": created,
            "sent_at": clock.iso(NOW - timedelta(hours=sent_hours_ago)) if message_id else None,
        }
        data = {"subject": "S", "body": "B"} if family == "notice" else None
        if family == "campaign":
            outbox_id = make_outbox_row(family="notice", **columns)
            with ctx.db.write() as conn:
                conn.exec_driver_sql("UPDATE email_outbox SET family = 'campaign' WHERE id = ?", (outbox_id,))
        else:
            outbox_id = make_outbox_row(data=data, **columns)
        if receipt:
            extra = {"bounce": {"type": "Transient", "subType": "MailboxFull"}} if receipt == "transient" else {}
            kind = "email.bounced" if receipt == "transient" else "email.delivery_delayed"
            body = json.dumps(event(kind, email_id=message_id, outbox_id=outbox_id, **extra)).encode()
            apply_receipt_event(
                ctx.db, f"msg_{uuid.uuid4().hex}", body, environment=ctx.settings.portal_env, now=clock.utcnow()
            )
        written[outbox_id] = (family, day, figure, message_id is not None)
    return written


def expected(written, day, family=None) -> dict[str, int]:
    rows = [w for w in written.values() if w[1] == day and (family is None or w[0] == family)]
    counts = Counter(figure for _, _, figure, _ in rows)
    return {
        **{figure: counts.get(figure, 0) for figure in PARTITION},
        "committed": len(rows),
        "accepted": sum(1 for *_, accepted in rows if accepted),
    }


def test_each_committed_email_is_counted_once_by_what_became_of_it(ctx, written):
    zone = report_timezone(ctx.settings)
    days = [DAY - timedelta(days=2), DAY - timedelta(days=1), DAY, DAY + timedelta(days=1)]
    found = reconcile(ctx.db, days=days, zone=zone, no_receipt_hours=HOURS, now=NOW)

    for index, day in enumerate(days):
        total = found.totals[index]
        assert {f: total[f] for f in (*PARTITION, "committed", "accepted")} == expected(written, day), day
        assert total.accounted
        for family in ("notice", "campaign"):
            if family in found.by_family:
                got = found.by_family[family][index]
                assert {f: got[f] for f in (*PARTITION, "committed", "accepted")} == expected(written, day, family)
    assert found.totals[0].counts == dict.fromkeys(FIGURES, 0)  # a day without email: zeros
    assert found.totals[2]["bounced_transient"] == 1  # the receipt's kept fields say Transient
    assert found.totals[2].unexplained == 2  # one without a receipt past 48 hours, one unknown outcome


def test_the_hours_before_no_receipt_are_the_settings(ctx, written):
    zone = report_timezone(ctx.settings)
    sooner = reconcile(ctx.db, days=[DAY], zone=zone, no_receipt_hours=5, now=NOW).totals[0]
    later = reconcile(ctx.db, days=[DAY], zone=zone, no_receipt_hours=72, now=NOW).totals[0]
    assert (sooner["no_receipt"], sooner["awaiting_receipt"]) == (2, 0)
    assert (later["no_receipt"], later["awaiting_receipt"]) == (0, 2)


def test_the_page_the_csv_and_the_command_agree(client, admin, ctx, make_outbox_row, runner, monkeypatch):
    today = clock.utcnow().astimezone(report_timezone(ctx.settings)).date()
    make_outbox_row(status="delivered", provider_message_id="re_a")
    make_outbox_row(status="sent", provider_message_id="re_b", sent_at=clock.iso_in(-3 * 86400))
    make_outbox_row(status="dead_letter", provider_message_id=None, outcome_unknown=1)

    page = client.get("/admin/outbox/reconciliation")
    assert page.status_code == 200
    text = html.unescape(page.get_data(as_text=True))
    words = " ".join(re.sub(r"<[^>]+>", "", text).split())
    assert "3 committed, 2 accepted, 1 delivered; 2 without an answer" in words
    footer = text[text.index("<tfoot>") : text.index("</tfoot>")]
    assert re.findall(r'<td class="num">([^<]+)</td>', footer) == [
        "3", "2", "1", "0", "0", "0", "0", "0", "1", "0", "0", "1", "0", "0"
    ]  # fmt: skip

    listed = text[text.index('id="unexplained-title"') : text.index("</table>", text.index('id="unexplained-title"'))]
    known = [" ".join(re.sub(r"<[^>]+>", "", cell).split()) for cell in re.findall(r"<td>(.*?)</td>", listed, re.S)]
    unanswered = [k for k in known if k.startswith(("No receipt", "Unknown"))]  # newest first
    assert unanswered[0] == "Unknown outcome: a person decides" and len(unanswered) == 2
    assert re.fullmatch(r"No receipt, accepted \d+ \w+ \d{4}, \d\d:\d\d \S+; not asked yet", unanswered[1])

    download = client.get("/admin/outbox/reconciliation.csv")
    assert download.status_code == 200 and download.mimetype == "text/csv"
    lines = list(csv.DictReader(io.StringIO(download.get_data(as_text=True))))
    assert len({line["day"] for line in lines}) == 30
    (all_today,) = [line for line in lines if line["day"] == today.isoformat() and line["family"] == "all"]
    assert (all_today["committed"], all_today["no_receipt"], all_today["unknown_outcome"]) == ("3", "1", "1")

    result = runner.invoke(args=["outbox", "reconcile", "--date", today.isoformat()])
    assert result.exit_code == 0, result.output
    last = result.output.strip().splitlines()[-1].split()
    assert last[0] == "total" and last[1:4] == ["3", "2", "1"]
    assert "@" not in result.output

    bad = runner.invoke(args=["outbox", "reconcile", "--date", "2026-13-01"])
    assert bad.exit_code == 2 and "'2026-13-01' does not match the format '%Y-%m-%d'" in bad.output


def test_a_family_is_chosen_by_name_and_an_unknown_one_refused(client, admin, make_outbox_row):
    make_outbox_row(status="delivered", provider_message_id="re_a")
    notice = html.unescape(client.get("/admin/outbox/reconciliation?family=notice").get_data(as_text=True))
    assert "Notice, by day" in notice
    quiet = client.get("/admin/outbox/reconciliation?family=campaign")  # a family with no email: zeros
    assert quiet.status_code == 200
    refused = client.get("/admin/outbox/reconciliation?family=nonsense")
    assert refused.status_code == 400
    assert "There is no email family called “nonsense”" in html.unescape(refused.get_data(as_text=True))


def test_only_admins_see_the_reconciliation(client, auth, make_user):
    auth.login(make_user("manager"))
    assert client.get("/admin/outbox/reconciliation").status_code == 403
    assert client.get("/admin/outbox/reconciliation.csv").status_code == 403


def test_the_metrics_agree_with_the_page(client, admin, make_outbox_row, ctx):
    from prometheus_client.parser import text_string_to_metric_families

    make_outbox_row(status="delivered", provider_message_id="re_a", last_event_at=clock.iso_in(-600))
    make_outbox_row(status="sent", provider_message_id="re_b", sent_at=clock.iso_in(-3 * 86400))
    make_outbox_row(status="sent", provider_message_id="re_c", sent_at=clock.iso_in(-1800))
    make_outbox_row(status="dead_letter", provider_message_id=None, outcome_unknown=1)
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(client.get("/metrics").get_data(as_text=True))
        for sample in family.samples
    }
    page = html.unescape(client.get("/admin/outbox/reconciliation?family=notice").get_data(as_text=True))
    footer = re.findall(r'<td class="num">([^<]+)</td>', page[page.index("<tfoot>") : page.index("</tfoot>")])
    on_page = dict(zip(FIGURES, (int(n.replace(",", "")) for n in footer), strict=True))
    in_metrics = {f: samples[("portal_outbox_reconciled", (("family", "notice"), ("figure", f)))] for f in FIGURES}
    assert in_metrics == on_page  # every email here was committed today, inside both windows
    assert (on_page["no_receipt"], on_page["awaiting_receipt"], on_page["unknown_outcome"]) == (1, 1, 1)
    # Sends went on in the last two hours (one accepted 30 minutes ago), and a receipt moved one.
    assert samples[("portal_outbox_accepted_last_2h", (("family", "notice"),))] == 1
    assert samples[("portal_outbox_receipted_last_2h", (("family", "notice"),))] == 1
    assert samples[("portal_outbox_reconciled", (("family", "campaign"), ("figure", "committed")))] == 0


def test_the_page_counts_the_emails_past_the_providers_memory_without_a_final_status(client, admin, make_outbox_row):
    """Resend keeps an email's record PROVIDER_LOG_RETENTION_DAYS (1 by default): an accepted email
    with no final status after that can no longer be asked about, and the page says how many."""
    make_outbox_row(status="sent", provider_message_id="re_gone", sent_at=clock.iso_in(-25 * 3600))
    make_outbox_row(status="sent", provider_message_id="re_older", sent_at=clock.iso_in(-30 * 3600))
    make_outbox_row(status="sent", provider_message_id="re_known", sent_at=clock.iso_in(-23 * 3600))  # still kept
    make_outbox_row(status="delivered", provider_message_id="re_done", sent_at=clock.iso_in(-40 * 3600))

    shown = past_memory_block(client)
    assert "2 emails passed the provider’s memory without a final status." in shown
    assert "Resend keeps an email’s record 1 day (PROVIDER_LOG_RETENTION_DAYS)" in shown


def test_nothing_past_the_providers_memory_is_said_so(client, admin, make_outbox_row):
    make_outbox_row(status="sent", provider_message_id="re_new", sent_at=clock.iso_in(-3600))
    assert "No email passed the provider’s memory without a final status." in past_memory_block(client)


def past_memory_block(client) -> str:
    text = html.unescape(client.get("/admin/outbox/reconciliation").get_data(as_text=True))
    start = text.index('id="past-provider-memory"')
    return " ".join(re.sub(r"<[^>]+>", "", text[start : text.index("</section>", start)]).split())
