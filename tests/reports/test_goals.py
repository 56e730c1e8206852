"""Issue 50, item 1: a company's yearly goals and the same period last year, on the page and in the
filing PDF, hidden as every other filed figure.

Expected figures are computed here from the rows the test inserted (minutes to hours with the
builders' own rounding, shares with fractions), never from the portal's code.
"""

from __future__ import annotations

import io
import re
from fractions import Fraction
from pathlib import Path

import sqlalchemy as sa
from pypdf import PdfReader

from tests.pages import csrf_from

from .conftest import Row, oslo, shown_hours

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "goals"
YEAR_2025 = "from=2025-01-01&to=2025-12-31&programme=all"
YEAR_2024 = "from=2024-01-01&to=2024-12-31&programme=all"
MARCH_2025 = "from=2025-03-01&to=2025-03-31&programme=all"
FEBRUARY_2025 = "from=2025-02-01&to=2025-02-28&programme=all"


def pdf_text(response) -> str:
    assert response.status_code == 200 and response.mimetype == "application/pdf", response.status_code
    return " ".join(" ".join(p.extract_text() for p in PdfReader(io.BytesIO(response.get_data())).pages).split())


def whole_percent(value: Fraction) -> str:
    """A share as the report prints progress: whole percent, half up."""
    return f"{int(value * 100 + Fraction(1, 2))}%"


def shown_value(minutes: int) -> Fraction:
    """The hours a report prints, as a fraction (two decimals, half up)."""
    return Fraction(shown_hours(minutes).replace(",", ""))


def this_year(company_id, people):
    """2025: ten colleagues in Language in February (50 min), five others in Mentorship in May (75 min),
    six of the first in Language in March (40 min)."""
    return (
        [Row("language", uid, company_id, oslo("2025-02-04T18:00"), 50) for uid in people[:10]]
        + [Row("mentorship", uid, company_id, oslo("2025-05-06T18:00"), 75) for uid in people[10:15]]
        + [Row("language", uid, company_id, oslo("2025-03-11T18:00"), 40) for uid in people[:6]]
    )


def set_goal(db, company_id, year_start, hours, participation):
    with db.write() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO company_goals (company_id, year_start, hours, participation, updated_at) "
                "VALUES (:c, :y, :h, :p, '2025-01-02T00:00:00.000000Z')"
            ),
            {"c": company_id, "y": year_start, "h": hours, "p": participation},
        )


def totals(rows, employees):
    minutes = sum(r.minutes for r in rows)
    volunteers = len({r.user_id for r in rows})
    return minutes, len(rows), volunteers, Fraction(volunteers, employees)


def expected_lines(now_rows, before_rows, employees=20):
    minutes, sessions, volunteers, rate = totals(now_rows, employees)
    b_minutes, b_sessions, b_volunteers, b_rate = totals(before_rows, employees)
    change = shown_value(minutes) - shown_value(b_minutes)
    points = round(rate * 100, 1) - round(b_rate * 100, 1)
    return {
        "hours": (
            shown_hours(minutes),
            shown_hours(b_minutes),
            f"{'+' if change >= 0 else '−'}{abs(float(change)):.2f}",
        ),
        "sessions": (
            str(sessions),
            str(b_sessions),
            f"{'+' if sessions >= b_sessions else '−'}{abs(sessions - b_sessions)}",
        ),
        "volunteers": (
            str(volunteers),
            str(b_volunteers),
            f"{'+' if volunteers >= b_volunteers else '−'}{abs(volunteers - b_volunteers)}",
        ),
        "participation": (
            f"{float(round(rate * 100, 1)):.1f}%",
            f"{float(round(b_rate * 100, 1)):.1f}%",
            f"{'+' if points >= 0 else '−'}{abs(float(points)):.1f} points",
        ),
    }


def test_the_page_and_the_pdf_measure_the_year_against_its_goal_and_the_year_before(
    db, company, insert_sessions, manager_client
):
    company_id, manager, people = company("Acme Ltd", employees=20)
    now_rows = insert_sessions(this_year(company_id, people))
    before_rows = insert_sessions(
        [Row("language", uid, company_id, oslo("2024-03-05T18:00"), 60) for uid in people[:6]]
        + [Row("language", uid, company_id, oslo("2024-09-10T18:00"), 45) for uid in people[:6]]
    )
    set_goal(db, company_id, "2025-01-01", "20", "80")
    client = manager_client(manager)

    minutes, _, volunteers, rate = totals(now_rows, 20)
    hours_line = f"Hours goal: {shown_hours(minutes)} of 20 hours, {whole_percent(shown_value(minutes) / 20)}"
    share = round(rate * 100, 1)
    participation_line = (
        f"Participation goal: {float(share):.1f}% of 80%, {whole_percent(Fraction(share) / 80)} of the goal"
    )
    lines = expected_lines(now_rows, before_rows)

    page = client.get(f"/reports?{YEAR_2025}").get_data(as_text=True)
    section = page[page.index('id="comparison"') : page.index("</section>", page.index('id="comparison"'))]
    assert hours_line in section and participation_line in section
    cells = re.findall(r'<td class="num"[^>]*>([^<]*)</td>', section)
    assert cells == [value for key in ("hours", "sessions", "volunteers", "participation") for value in lines[key]]
    assert "2024-01-01 to 2024-12-31" in section

    response = client.get(f"/reports/export.pdf?{YEAR_2025}")
    text = pdf_text(response)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "filed-2025.pdf").write_bytes(response.get_data())  # for a person to look at
    assert hours_line in text and participation_line in text
    for name, key in (("Verified hours", "hours"), ("Sessions", "sessions"), ("Active volunteers", "volunteers")):
        assert f"{name} {' '.join(lines[key])}" in text, name
    assert f"Participation {' '.join(lines['participation'])}" in text
    assert "CECP" in text and "Giving in Numbers" in text  # the benchmark, named with its source
    # Last year was filed with this year's PDF, and its own PDF states the same figures.
    (before_id,) = re.findall(r"Last year as filed in report (TEEI-\S+)\.", text)
    before_text = pdf_text(client.get(f"/reports/export.pdf?{YEAR_2024}"))
    assert before_id in before_text and lines["hours"][1] in before_text
    # A goal changed after the filing does not change the filed copy.
    with db.write() as conn:
        conn.execute(sa.text("UPDATE company_goals SET hours = '999' WHERE company_id = :c"), {"c": company_id})
    assert pdf_text(client.get(f"/reports/export.pdf?{YEAR_2025}")) == text


def test_a_year_before_of_a_small_group_stays_hidden_and_so_does_the_change(
    db, company, insert_sessions, manager_client
):
    company_id, manager, people = company("Acme Ltd", employees=20)
    now_rows = insert_sessions(this_year(company_id, people))
    # Three colleagues last year: a small group, hidden in last year's filing, and here.
    insert_sessions([Row("language", uid, company_id, oslo("2024-03-05T18:00"), 60) for uid in people[:3]])
    client = manager_client(manager)
    text = pdf_text(client.get(f"/reports/export.pdf?{YEAR_2025}"))
    minutes = sum(r.minutes for r in now_rows)
    now_hours = shown_hours(minutes)
    assert f"Verified hours {now_hours} hidden hidden" in text
    assert f"Sessions {len(now_rows)} hidden hidden" in text
    assert "Active volunteers 15 hidden hidden" in text
    assert "Participation 75.0% hidden hidden" in text
    before_hours = shown_value(180)
    assert shown_hours(180) not in text, "last year's hours"
    assert f"{float(shown_value(minutes) - before_hours):.2f}" not in text, "the change would give them away"
    # The page is the company's working copy: there, last year is shown.
    page = client.get(f"/reports?{YEAR_2025}").get_data(as_text=True)
    assert re.search(rf'<td class="num"[^>]*>{re.escape(now_hours)}</td><td class="num"[^>]*>3.00</td>', page)


def test_a_month_filing_measures_the_year_to_date_only_from_released_months(
    db, company, insert_sessions, manager_client
):
    company_id, manager, people = company("Acme Ltd", employees=20)
    insert_sessions(this_year(company_id, people))
    set_goal(db, company_id, "2025-01-01", "20", "80")
    client = manager_client(manager)
    # February has sessions and no filing yet: March's year to date would release it. Hidden.
    text = pdf_text(client.get(f"/reports/export.pdf?{MARCH_2025}"))
    assert "Hours goal, year to date (through 2025-03-31): hidden" in text
    assert "Participation goal: 80.0%, measured over the whole year in the year's report." in text


def test_the_year_to_date_is_the_sum_of_the_released_months(db, company, insert_sessions, manager_client):
    company_id, manager, people = company("Acme Ltd", employees=20)
    rows = insert_sessions(this_year(company_id, people))
    set_goal(db, company_id, "2025-01-01", "20", None)
    client = manager_client(manager)
    pdf_text(client.get(f"/reports/export.pdf?{FEBRUARY_2025}"))  # February filed, its total shown
    text = pdf_text(client.get(f"/reports/export.pdf?{MARCH_2025}"))
    through_march = sum(r.minutes for r in rows if r.held_at.month <= 3)
    share = whole_percent(shown_value(through_march) / 20)
    assert f"Hours goal, year to date (through 2025-03-31): {shown_hours(through_march)} of 20 hours, {share}" in text
    assert "Participation goal" not in text


def test_goals_are_set_on_the_settings_page_and_bad_input_changes_nothing(db, company, manager_client):
    company_id, manager, _ = company("Acme Ltd", employees=3)
    client = manager_client(manager)
    page = client.get("/reports/settings").get_data(as_text=True)
    token = csrf_from(page)
    year = re.search(r'<option selected value="(\d{4}-\d{2}-\d{2})">', page[page.index('id="goals"') :]).group(1)

    def stored():
        with db.read() as conn:
            return conn.execute(
                sa.text("SELECT year_start, hours, participation FROM company_goals WHERE company_id = :c"),
                {"c": company_id},
            ).all()

    for hours, share, field, message in (
        ("-5", "20", "goal_hours", "A number of hours, 0 or more"),
        ("600", "120", "goal_participation", "A share of colleagues from 0 to 100"),
        ("lots", "20", "goal_hours", "A number of hours, 0 or more"),
        ("600", "a fifth", "goal_participation", "A share of colleagues from 0 to 100"),
    ):
        response = client.post(
            "/reports/goals",
            data={"csrf_token": token, "year_start": year, "goal_hours": hours, "goal_participation": share},
        )
        assert response.status_code == 400
        body = response.get_data(as_text=True)
        error = re.search(rf'<p class="field-error" id="{field}-error">(.*?)</p>', body, re.S)
        assert error and message in error.group(1), (hours, share)
        assert 'aria-invalid="true"' in body[body.index(f'id="{field}-error"') :][:600]
        assert stored() == []
    response = client.post(
        "/reports/goals",
        data={"csrf_token": token, "year_start": year, "goal_hours": "1 250,5", "goal_participation": "25"},
    )
    assert response.status_code == 302
    assert stored() == [(year, "1250.5", "25")]
    assert "1250.5 hours · 25% participation" in client.get("/reports/settings").get_data(as_text=True)
    # A year not offered (one that has ended) is refused.
    response = client.post(
        "/reports/goals",
        data={"csrf_token": token, "year_start": "2020-01-01", "goal_hours": "5", "goal_participation": ""},
    )
    assert response.status_code == 400 and stored() == [(year, "1250.5", "25")]
