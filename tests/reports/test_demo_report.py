"""The demo (`flask demo seed`, so `make run`) shows the product: a year of volunteers in both
programmes, so the filing PDF, its crosswalk and the charts carry real figures."""

from __future__ import annotations

import io
import re
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import sqlalchemy as sa
from pypdf import PdfReader

from portal.core.periods import today_in
from portal.seed import DEMO_PASSWORD, seed_demo

from .conftest import OSLO, shown_hours

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def test_the_demo_company_has_a_year_that_the_filing_pdf_shows_in_full(db, auth, client, settings):
    seed_demo(db, secret_key=settings.secret_key, history=True)
    with db.read() as conn:
        counted = conn.execute(sa.text("SELECT COUNT(*) FROM attendance_sessions")).scalar()
    seed_demo(db, secret_key=settings.secret_key, history=True)  # a second run writes nothing new
    with db.read() as conn:
        assert conn.execute(sa.text("SELECT COUNT(*) FROM attendance_sessions")).scalar() == counted
        rows = conn.execute(
            sa.text(
                "SELECT platform, volunteer_email, held_at, minutes FROM attendance_sessions WHERE status = 'attended' AND company_id IS NOT NULL"
            )
        ).all()
    today = today_in(OSLO)
    start = today.replace(year=today.year - 1) + timedelta(days=1)
    query = f"from={start}&to={today}&programme=all"
    in_period = [r for r in rows if datetime.fromisoformat(r.held_at).astimezone(OSLO).date() >= start]
    people = defaultdict(set)
    months = set()
    for row in in_period:
        people[row.platform].add(row.volunteer_email)
        months.add(datetime.fromisoformat(row.held_at).astimezone(OSLO).strftime("%Y-%m"))
    assert len(people["language"]) >= 6 and len(people["mentorship"]) >= 6 and len(months) >= 10

    auth.login("manager@northwind.example", DEMO_PASSWORD)
    page = client.get(f"/reports?{query}").get_data(as_text=True)
    assert re.search(r'id="figure-hours">([^<]+)<', page).group(1) == shown_hours(sum(r.minutes for r in in_period))
    assert int(re.search(r'id="figure-volunteers">([^<]+)<', page).group(1)) >= 12
    # Five colleagues have accounts but no sessions yet: participation is a share, as in a real company.
    assert re.search(r'id="figure-participation">([^<]+)<', page).group(1) == f"{100 * 17 / 22:.1f}%"

    # The filing PDF covers a whole period that has ended: the last quarter.
    this_quarter = today.replace(month=(today.month - 1) // 3 * 3 + 1, day=1)
    quarter_end = this_quarter - timedelta(days=1)
    quarter_start = quarter_end.replace(month=quarter_end.month - 2, day=1)
    in_quarter = [
        r for r in rows if quarter_start <= datetime.fromisoformat(r.held_at).astimezone(OSLO).date() <= quarter_end
    ]
    pdf = client.get(f"/reports/export.pdf?from={quarter_start}&to={quarter_end}&programme=all").get_data()
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "demo-report.pdf").write_bytes(pdf)
    text = " ".join(" ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages).split())
    by_programme = text[text.index("Programme Hours Sessions") : text.index("Methodology")]
    assert "hidden" not in by_programme
    assert "hidden" not in text.split("Figures by month")[0]
    assert "Not shown" not in text
    assert "Mentorship bars are hatched" in text  # the hatched bar is drawn, so its legend is there
    assert f"{shown_hours(sum(r.minutes for r in in_quarter))} Verified hours" in text
    assert datetime.now(UTC) > datetime.fromisoformat(max(r.held_at for r in rows))


def test_tests_and_the_browser_stack_keep_the_three_demo_employees(db, settings):
    seed_demo(db, secret_key=settings.secret_key, attendance=False)
    with db.read() as conn:
        assert conn.execute(sa.text("SELECT COUNT(*) FROM users WHERE role = 'employee'")).scalar() == 3
