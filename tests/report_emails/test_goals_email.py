"""Issue 50, item 1, in the report email: the year's goal (its hours over the year to date) and the
same month last year, in the HTML and the text part, hidden exactly as the attached PDF hides them."""

from __future__ import annotations

import base64
import io
import re
from fractions import Fraction
from html import unescape

import sqlalchemy as sa
from pypdf import PdfReader

from portal.report_emails.operations import backfill
from tests.reports.conftest import shown_hours

from .test_schedule_runs import Row, oslo, utc


def pdf_text(body: bytes) -> str:
    return " ".join(" ".join(p.extract_text() for p in PdfReader(io.BytesIO(body)).pages).split())


def whole_percent(value: Fraction) -> str:
    return f"{int(value * 100 + Fraction(1, 2))}%"


def test_the_month_email_states_the_goal_and_last_year_as_its_pdf_does(
    ctx, db, company, insert_sessions, subscribe, report_rows, deliver, provider_model
):
    company_id, manager, people = company("Acme Ltd", employees=20)
    # March 2024: six colleagues, 60 minutes. March 2025: seven, 40 minutes; and three in February 2025.
    before = insert_sessions([Row("language", uid, company_id, oslo("2024-03-05T18:00:00"), 60) for uid in people[:6]])
    now = insert_sessions([Row("language", uid, company_id, oslo("2025-03-11T18:00:00"), 40) for uid in people[:7]])
    insert_sessions([Row("mentorship", uid, company_id, oslo("2025-02-11T18:00:00"), 45) for uid in people[10:13]])
    with db.write() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO company_goals (company_id, year_start, hours, participation, updated_at) "
                "VALUES (:c, '2025-01-01', '30', '50', '2025-01-02T00:00:00.000000Z')"
            ),
            {"c": company_id},
        )
    subscribe(manager, "monthly", since="2025-01-01T00:00:00.000000Z")
    backfill(ctx, company_name="Acme Ltd", period="2025-03", requested_by="test", now=utc("2025-04-02T06:00:00"))
    (row,) = report_rows()
    assert deliver(row["id"]) == "ack:sent"
    (email,) = provider_model.sent()
    text, html = email["text"], unescape(email["html"])
    attached = pdf_text(base64.b64decode(email["attachments"][0]["content"]))

    now_minutes, before_minutes = sum(r.minutes for r in now), sum(r.minutes for r in before)
    change = Fraction(shown_hours(now_minutes)) - Fraction(shown_hours(before_minutes))
    sign = "+" if change >= 0 else "−"
    # February's three mentors are a small group, never filed: the year to date would give them away.
    ytd = "Hours goal, year to date (through 2025-03-31): hidden"
    share = "Participation goal: 50.0%, measured over the whole year in the year's report."
    for part in (text, attached):
        assert ytd in part and share in part
    assert ytd in html and share in html
    hours_text = f"Verified hours: {shown_hours(now_minutes)} (last year {shown_hours(before_minutes)}, change {sign}{abs(float(change)):.2f})"
    assert hours_text in text
    assert "Sessions: 7 (last year 6, change +1)" in text
    counted = "Counts hours in working time. No own-time hours are included"
    assert counted in text and counted in html and counted in attached
    assert "Active volunteers: 7 (last year 6, change +1)" in text
    # 20 colleagues: 35.0% now, 30.0% last year.
    assert "Participation: 35.0% (last year 30.0%, change +5.0 points)" in text
    assert (
        f"Verified hours {shown_hours(now_minutes)} {shown_hours(before_minutes)} {sign}{abs(float(change)):.2f}"
        in attached
    )
    comparison = html[html.index("Goals and the year before") :]
    cells = re.findall(r'<td align="right"[^>]*>([^<]*)</td>', comparison)
    assert cells[:3] == [shown_hours(now_minutes), shown_hours(before_minutes), f"{sign}{abs(float(change)):.2f}"]
    assert cells[3:6] == ["7", "6", "+1"]
