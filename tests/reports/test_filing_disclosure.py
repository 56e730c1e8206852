"""Issue 31's attacks on the filed PDFs, each tried through the real routes and read back with pypdf.

The check that nothing hidden can be worked out is independent of the portal's: it parses the
hours each PDF prints and compares matrix ranks (its own elimination, in `rank` below).
"""

from __future__ import annotations

import io
import re
from datetime import date
from fractions import Fraction

from pypdf import PdfReader

from portal.reports.charts import month_chart
from portal.reports.figures import Cell, Figures, MonthRow
from tests.pages import csrf_from

from .conftest import Row, oslo, pack_hours, pack_of, shown_hours
from .linear import rank

MONTHS = {"Jan": "01", "Feb": "02", "Mar": "03", "Apr": "04", "May": "05", "Jun": "06"}


def pdf_text(response) -> str:
    assert response.status_code == 200 and response.mimetype == "application/pdf", response.status_code
    return " ".join(" ".join(p.extract_text() for p in PdfReader(io.BytesIO(response.get_data())).pages).split())


def printed_hours(text: str, programmes=("language", "mentorship")) -> dict[tuple, Fraction]:
    """The hours a filing PDF prints, keyed by (first month, last month, programme or 'all')."""
    found = {}
    table = text[text.index("Volunteers", text.index("Figures by month")) : text.index("By programme")]
    table = re.sub(r"· report TEEI-\S+ · as of .+? · page \d+/\d+", "", table)  # a page break's footer
    months = []
    for match in re.finditer(r"(\w{3}) (20\d\d) (\S+) (\S+) (\S+) (\S+) (\S+)", table):
        month = f"{match.group(2)}-{MONTHS[match.group(1)]}"
        months.append(month)
        for programme, value in zip((*programmes, "all"), match.group(3, 4, 5), strict=True):
            if value != "hidden":
                found[(month, month, programme)] = Fraction(value.replace(",", ""))
    total = re.search(r"Total (\S+) (\S+) (\S+) (\S+) (\S+)", table)
    for programme, value in zip((*programmes, "all"), total.group(1, 2, 3), strict=True):
        if value != "hidden":
            found[(months[0], months[-1], programme)] = Fraction(value.replace(",", ""))
    return found


def vector(key, all_months, programmes=("language", "mentorship")) -> list[int]:
    first, last, programme = key
    return [
        int(first <= month <= last and (programme == "all" or programme == p))
        for month in all_months
        for p in programmes
    ]


def determined(target, known_keys, all_months) -> bool:
    known = [vector(k, all_months) for k in known_keys]
    return rank(known + [vector(target, all_months)]) == rank(known) if known else False


def staff_rows(staff, company_id, programme, day, people, minutes=60):
    return [Row(programme, person, company_id, oslo(f"{day}T18:00"), minutes) for person in people]


def test_a_single_programme_or_a_custom_range_gets_no_filing_pdf(company, insert_sessions, manager_client):
    """One programme against all programmes, and ranges a day apart: neither is a filing PDF."""
    acme, manager, staff = company("Acme Ltd", employees=9)
    insert_sessions(
        staff_rows(staff, acme, "language", "2025-03-04", staff[:7])
        + staff_rows(staff, acme, "mentorship", "2025-03-11", staff[7:])
    )
    client = manager_client(manager)
    for query in (
        "from=2025-03-01&to=2025-03-31&programme=language",  # one programme against all
        "from=2025-01-01&to=2025-03-30&programme=all",  # a range a day short of the quarter
        f"from=2025-01-01&to={date.today()}&programme=all",  # year to date, downloaded on two days
    ):
        response = client.get(f"/reports/export.pdf?{query}")
        assert response.status_code == 400, query
        assert "A filing PDF covers a whole month, quarter or year that has ended" in response.get_data(as_text=True)
    page = client.get("/reports?from=2025-03-01&to=2025-03-31&programme=language").get_data(as_text=True)
    assert "PDF for filing</a>" not in page and 'id="filing-hint"' in page
    # The month for all programmes: Mentorship (2) is hidden, and Language with it.
    text = pdf_text(client.get("/reports/export.pdf?from=2025-03-01&to=2025-03-31&programme=all"))
    shown = printed_hours(text)
    assert ("2025-03", "2025-03", "mentorship") not in shown
    assert not determined(("2025-03", "2025-03", "mentorship"), list(shown), ["2025-03"])


def test_a_quarter_filed_after_its_months_gives_no_month_away(company, insert_sessions, manager_client):
    """January and February are shown in full; March has 2 volunteers. Q1 − Jan − Feb must not give March."""
    acme, manager, staff = company("Acme Ltd", employees=14)
    rows = []
    for month in ("2025-01-14", "2025-02-11"):
        rows += staff_rows(staff, acme, "language", month, staff[:6]) + staff_rows(
            staff, acme, "mentorship", month, staff[6:12], 45
        )
    rows += staff_rows(staff, acme, "language", "2025-03-11", staff[12:], 75)
    insert_sessions(rows)
    client = manager_client(manager)
    known = {}
    for query in ("from=2025-01-01&to=2025-01-31", "from=2025-02-01&to=2025-02-28"):
        known.update(printed_hours(pdf_text(client.get(f"/reports/export.pdf?{query}&programme=all"))))
        # The filing pack (issue 50) is the same filing: what it shows joins what is known.
        known.update(pack_hours(pack_of(client, f"{query}&programme=all")))
    # A late session for January arrives between the month's filing and the quarter's.
    insert_sessions(
        staff_rows(staff, acme, "mentorship", "2025-01-28", staff[:1], 33), received_at="2099-01-01T00:00:00.000000Z"
    )
    quarter = printed_hours(pdf_text(client.get("/reports/export.pdf?from=2025-01-01&to=2025-03-31&programme=all")))
    # The quarter prints January as January was filed: Q1 − Jan − Feb is not the late session.
    assert {k: v for k, v in quarter.items() if k[1] <= "2025-02"} == {k: v for k, v in known.items() if k in quarter}
    known.update(quarter)
    quarter_pack = pack_hours(pack_of(client, "from=2025-01-01&to=2025-03-31&programme=all"))
    assert quarter_pack == quarter  # the pack shows exactly what its PDF shows
    known.update(quarter_pack)
    months = ["2025-01", "2025-02", "2025-03"]
    assert known[("2025-01", "2025-01", "all")] == Fraction("10.5")  # January is printed in full
    for hidden in (("2025-03", "2025-03", "all"), ("2025-03", "2025-03", "language")):
        assert hidden not in known and not determined(hidden, list(known), months)
    # The same quarter downloaded again is the same PDF, whatever arrived since.
    insert_sessions(
        staff_rows(staff, acme, "language", "2025-03-20", staff[:1]), received_at="2099-01-01T00:00:00.000000Z"
    )
    again = printed_hours(pdf_text(client.get("/reports/export.pdf?from=2025-01-01&to=2025-03-31&programme=all")))
    assert {k: v for k, v in again.items()} == {k: v for k, v in known.items() if k[0] >= "2025-01" and k in again}


def test_bars_are_scaled_by_the_longest_shown_bar():
    """A hidden busiest month must not set the scale: one shown bar's length would give it away."""
    months = [
        MonthRow("Jan 2025", "2025-01-01", "2025-01-31", Cell(600, 6, 6), {}),
        MonthRow("Feb 2025", "2025-02-01", "2025-02-28", Cell(900, 3, 3), {}),
        MonthRow("Mar 2025", "2025-03-01", "2025-03-31", Cell(300, 6, 6), {}),
    ]
    figures = Figures(Cell(1800, 15, 12), 12, {}, months)
    chart = month_chart(figures, [False, True, False])
    assert [bar.fraction for bar in chart.bars] == [1.0, 0.0, 0.5]
    assert "Feb" not in chart.description and "30.00 h in total" in chart.description


def test_a_closed_years_pdf_does_not_change_with_later_corrections(db, company, insert_sessions, manager_client):
    """Issue 46.7: two copies of a PDF that says "these figures do not change" must not differ by one
    colleague's late session; what changed since the close is on the report page."""
    acme, manager, staff = company("Acme Ltd", employees=12)
    insert_sessions(
        staff_rows(staff, acme, "language", "2025-03-04", staff[:6])
        + staff_rows(staff, acme, "mentorship", "2025-09-09", staff[6:12], 90)
    )
    client = manager_client(manager)
    token = csrf_from(client.get("/reports/settings").get_data(as_text=True))
    client.post("/reports/close", data={"period_start": "2025-01-01", "confirmed": "yes", "csrf_token": token})
    year = "/reports/export.pdf?from=2025-01-01&to=2025-12-31&programme=all"
    before = pdf_text(client.get(year))
    assert "These figures do not change" in before
    insert_sessions(
        staff_rows(staff, acme, "language", "2025-06-01", staff[:1], 72), received_at="2099-01-01T00:00:00.000000Z"
    )
    assert pdf_text(client.get(year)) == before
    insert_sessions(
        staff_rows(staff, acme, "mentorship", "2025-06-02", staff[1:6], 30), received_at="2099-01-02T00:00:00.000000Z"
    )
    assert pdf_text(client.get(year)) == before
    page = client.get("/reports?from=2025-01-01&to=2025-12-31&programme=all").get_data(as_text=True)
    assert "Changes since close:" in page and "+3.70 hours" in page  # 72 + 5 × 30 minutes, on the live page
    assert "Corrections that arrive after the close are not part of this filing" in before


def test_counts_that_reveal_a_colleague_in_both_programmes_are_hidden(company, insert_sessions, manager_client):
    """5 in Language and 5 in Mentorship with 9 in all says that exactly one is in both."""
    acme, manager, staff = company("Acme Ltd", employees=20)
    insert_sessions(
        staff_rows(staff, acme, "language", "2025-05-06", staff[:5])
        + staff_rows(staff, acme, "mentorship", "2025-05-13", staff[4:9], 45)
    )
    client = manager_client(manager)
    text = pdf_text(client.get("/reports/export.pdf?from=2025-05-01&to=2025-05-31&programme=all"))
    by_programme = text[text.index("By programme") : text.index("Methodology")]
    counts = re.findall(r"TEEI (?:Language|Mentorship) \S+ \S+ (\S+)", by_programme)
    total = re.search(r"(\S+) Active volunteers", text).group(1)
    assert counts.count("5") + (total == "9") < 3  # never all three of 5, 5 and 9
    assert "5.00" in by_programme and "3.75" in by_programme  # the hours themselves are groups of 5


def test_a_colleague_alone_in_two_hidden_groups_cannot_work_out_a_third(company, insert_sessions, manager_client):
    """Issue 46.6 through the filed PDFs: X is alone in January's Mentorship and March's Language, Y
    in February's Mentorship. With the months and the quarter filed, X's own two figures and
    everything printed must not give Y's February (nor Y's figure give X's)."""
    acme, manager, staff = company("Acme Ltd", employees=14)
    x, y = staff[12], staff[13]
    insert_sessions(
        staff_rows(staff, acme, "language", "2025-01-14", staff[:6])
        + staff_rows(staff, acme, "mentorship", "2025-01-21", [x], 50)
        + staff_rows(staff, acme, "language", "2025-02-11", staff[:6])
        + staff_rows(staff, acme, "mentorship", "2025-02-18", [y], 70)
        + staff_rows(staff, acme, "language", "2025-03-11", [x], 40)
        + staff_rows(staff, acme, "mentorship", "2025-03-18", staff[6:12], 45)
    )
    client = manager_client(manager)
    known = {}
    for query in ("from=2025-01-01&to=2025-03-31", "from=2025-02-01&to=2025-02-28", "from=2025-03-01&to=2025-03-31"):
        known.update(printed_hours(pdf_text(client.get(f"/reports/export.pdf?{query}&programme=all"))))
    months = ["2025-01", "2025-02", "2025-03"]
    alone = {"x": [("2025-01", "2025-01", "mentorship"), ("2025-03", "2025-03", "language")]}
    alone["y"] = [("2025-02", "2025-02", "mentorship")]
    for person, own in alone.items():
        for other, theirs in alone.items():
            for target in theirs if other != person else []:
                assert target not in known
                assert not determined(target, list(known) + own, months), f"{target} follows for {person}"


def test_hours_one_colleague_gave_most_of_are_hidden(company, insert_sessions, manager_client):
    """Issue 46.8: six colleagues in May's Language, one of them with 10 of its 12.50 hours (80%).
    The figure tells the other five roughly what that colleague did, so it is hidden, and nothing
    printed gives it back (one more figure of the month is hidden with it, as for a small group)."""
    acme, manager, staff = company("Acme Ltd", employees=12)
    rows = staff_rows(staff, acme, "language", "2025-05-06", staff[:5], 30)
    rows += staff_rows(staff, acme, "language", "2025-05-07", staff[5:6], 600)
    rows += staff_rows(staff, acme, "mentorship", "2025-05-13", staff[6:12], 60)
    insert_sessions(rows)
    # The rule, computed apart from the portal: the largest one colleague's share of each figure.
    by_area: dict[str, dict[int, int]] = {}
    for row in rows:
        for area in (row.platform, "all"):
            by_area.setdefault(area, {}).setdefault(row.user_id, 0)
            by_area[area][row.user_id] += row.minutes
    dominated = {area for area, people in by_area.items() if 5 * max(people.values()) >= 4 * sum(people.values())}
    assert dominated == {"language"}
    client = manager_client(manager)
    text = pdf_text(client.get("/reports/export.pdf?from=2025-05-01&to=2025-05-31&programme=all"))
    shown = printed_hours(text)
    assert ("2025-05", "2025-05", "language") not in shown and "12.50" not in text
    assert not determined(("2025-05", "2025-05", "language"), list(shown), ["2025-05"])
    assert shown[("2025-05", "2025-05", "all")] == Fraction(shown_hours(5 * 30 + 600 + 6 * 60))
    assert "one colleague gave 80% or more of its hours" in text


def test_the_rounding_footnote_tells_nothing_of_a_hidden_figure(company, insert_sessions, manager_client, auth):
    """Issue 46.9: two companies alike but for one lone mentor's minutes (60 or 61), a hidden figure.
    Measured over it, the rounding gap told those minutes modulo 3; their filing PDFs must read the same."""
    texts = []
    for name, lone in (("Acme Ltd", 60), ("Bravo Ltd", 61)):
        found, manager, staff = company(name, employees=8)
        rows = staff_rows(staff, found, "language", "2025-05-06", staff[:5]) + staff_rows(
            staff, found, "language", "2025-05-07", staff[5:6], 61
        )
        insert_sessions(rows + staff_rows(staff, found, "mentorship", "2025-05-13", staff[6:7], lone))
        client = manager_client(manager)
        text = pdf_text(client.get("/reports/export.pdf?from=2025-05-01&to=2025-05-31&programme=all"))
        auth.logout()
        texts.append(text[text.index("Figures by month") : text.index("Methodology")])
    assert "Total hidden hidden 7.02" in texts[0] and "Total hidden hidden 7.03" in texts[1]  # 421 and 422 minutes
    assert [text.replace("7.03", "7.02") for text in texts] == [texts[0]] * 2


def _close(client, year_start="2025-01-01"):
    token = csrf_from(client.get("/reports/settings").get_data(as_text=True))
    client.post("/reports/close", data={"period_start": year_start, "confirmed": "yes", "csrf_token": token})


def test_late_sessions_between_filings_are_stated_as_corrections(company, insert_sessions, manager_client):
    """Issue 46.10: January is filed, six colleagues' January sessions arrive, the year is closed. The
    year prints January as filed, so its filing states them: every verified hour is in the filing or
    in its stated corrections."""
    acme, manager, staff = company("Acme Ltd", employees=12)
    first = staff_rows(staff, acme, "language", "2025-01-14", staff[:6]) + staff_rows(
        staff, acme, "mentorship", "2025-03-11", staff[6:12], 90
    )
    insert_sessions(first)
    client = manager_client(manager)
    january = pdf_text(client.get("/reports/export.pdf?from=2025-01-01&to=2025-01-31&programme=all"))
    assert re.search(r"(\S+) Verified hours", january).group(1) == shown_hours(6 * 60)
    late = insert_sessions(
        staff_rows(staff, acme, "mentorship", "2025-01-21", staff[6:12], 60), received_at="2099-01-01T00:00:00.000000Z"
    )
    _close(client)
    text = pdf_text(client.get("/reports/export.pdf?from=2025-01-01&to=2025-12-31&programme=all"))
    printed = re.search(r"(\S+) Verified hours", text).group(1)
    assert printed == shown_hours(sum(r.minutes for r in first))  # January as filed, March
    corrections = text[text.index("Corrections") : text.index("Methodology")]
    stated = re.search(
        r"(\d+) session records for them arrived after that filing, for (\d+) colleagues: \+(\S+) hours", corrections
    )
    assert stated.groups() == ("6", "6", shown_hours(sum(r.minutes for r in late)))
    every = sum(r.minutes for r in first + late)
    assert Fraction(printed) + Fraction(stated.group(3)) == Fraction(shown_hours(every))


def test_one_colleagues_late_sessions_are_stated_but_not_sized(company, insert_sessions, manager_client):
    """Issue 46.10, the reported case: January filed at 6.00 h, one colleague's 6 hours arrive for it,
    the year is closed. Its PDF said "No corrections have arrived"; it must say that corrections for
    fewer than 5 colleagues arrived, without their size."""
    acme, manager, staff = company("Acme Ltd", employees=8)
    insert_sessions(staff_rows(staff, acme, "language", "2025-01-14", staff[:6]))
    client = manager_client(manager)
    client.get("/reports/export.pdf?from=2025-01-01&to=2025-01-31&programme=all")
    insert_sessions(
        staff_rows(staff, acme, "language", "2025-01-28", staff[:1], 360), received_at="2099-01-01T00:00:00.000000Z"
    )
    _close(client)
    text = pdf_text(client.get("/reports/export.pdf?from=2025-01-01&to=2025-12-31&programme=all"))
    assert "No corrections" not in text
    corrections = text[text.index("Corrections") : text.index("Methodology")]
    assert "for fewer than 5 colleagues, so their size is hidden" in corrections
    assert re.search(r"(\S+) Verified hours", text).group(1) == "6.00"
    assert "12.00" not in text and "+6.00" not in text


def test_hidden_corrections_are_carried_to_the_next_filing(company, insert_sessions, manager_client):
    """Issue 46.10: one colleague's late January hours are hidden in the quarter's corrections; when
    five more colleagues' arrive, the year states them all, so no verified hour is left unstated."""
    acme, manager, staff = company("Acme Ltd", employees=12)
    first = insert_sessions(staff_rows(staff, acme, "language", "2025-01-14", staff[:6]))
    client = manager_client(manager)
    client.get("/reports/export.pdf?from=2025-01-01&to=2025-01-31&programme=all")
    one = insert_sessions(
        staff_rows(staff, acme, "mentorship", "2025-01-21", staff[6:7], 360), received_at="2099-01-01T00:00:00.000000Z"
    )
    quarter = pdf_text(client.get("/reports/export.pdf?from=2025-01-01&to=2025-03-31&programme=all"))
    assert "for fewer than 5 colleagues, so their size is hidden" in quarter and "+6.00" not in quarter
    five = insert_sessions(
        staff_rows(staff, acme, "mentorship", "2025-01-28", staff[7:12], 60), received_at="2099-01-02T00:00:00.000000Z"
    )
    _close(client)
    text = pdf_text(client.get("/reports/export.pdf?from=2025-01-01&to=2025-12-31&programme=all"))
    stated = re.search(r"for (\d+) colleagues: \+(\S+) hours", text)
    assert stated.groups() == ("6", shown_hours(sum(r.minutes for r in one + five)))
    printed = re.search(r"(\S+) Verified hours", text).group(1)
    every = sum(r.minutes for r in first + one + five)
    assert Fraction(printed) + Fraction(stated.group(2)) == Fraction(shown_hours(every))
