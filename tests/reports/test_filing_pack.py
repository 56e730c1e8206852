"""The filing pack (issue 50, item 3): the filing as JSON and CSV data points, checked against the
JSON Schema in docs/, against the filing PDF it stands next to, and against figures computed here."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta
from decimal import Decimal

import pytest
import sqlalchemy as sa

from .conftest import DOCS, VALIDATOR, Row, oslo, pack_hours, pack_of, shown_hours
from .test_filing_disclosure import pdf_text, printed_hours, staff_rows

QUARTER = "from=2025-01-01&to=2025-03-31&programme=all"


def point(pack: dict, disclosure: str, measure: str, programme="all", start=None) -> dict:
    """One data point: over the whole period, or over the month beginning on `start`."""
    whole = {"start": pack["period"]["start"], "end": pack["period"]["end"]}
    found = [
        p
        for p in pack["data_points"]
        if (p["disclosure"], p["measure"], p["programme"]) == (disclosure, measure, programme)
        and (p["period"] == whole if start is None else p["period"]["start"] == start and p["period"] != whole)
    ]
    assert len(found) == 1, (disclosure, measure, programme, start, len(found))
    return found[0]


@pytest.fixture
def acme(company, insert_sessions):
    """Q1 2025: Language has 6 volunteers; Mentorship 2 in February (a group the filing hides)."""
    company_id, manager, staff = company("Acme Ltd", employees=9)
    rows = []
    for n, person in enumerate(staff[:6]):
        for week in range(n + 2):
            rows.append(Row("language", person, company_id, oslo("2025-01-06T18:00") + timedelta(days=7 * week), 45))
    rows.append(Row("mentorship", staff[6], company_id, oslo("2025-02-03T12:00"), 90))
    rows.append(Row("mentorship", staff[7], company_id, oslo("2025-02-28T23:30"), 45))  # still February in Oslo
    insert_sessions(rows)
    return company_id, manager, rows


def test_the_schemas_example_is_a_valid_pack():
    example = json.loads((DOCS / "filing-pack.example.json").read_text())
    assert not list(VALIDATOR.iter_errors(example))
    broken = {**example, "data_points": [{**example["data_points"][0], "value": "12.5"}]}
    assert list(VALIDATOR.iter_errors(broken)), "a value must be a number"
    hidden = next(p for p in example["data_points"] if p["masking"]["code"] == "hidden")
    leaking = {**example, "data_points": [{**hidden, "value": 3}]}
    assert list(VALIDATOR.iter_errors(leaking)), "a hidden data point carries no value"


def test_the_pack_is_the_filing_pdf_as_data_points(acme, manager_client, db):
    company_id, manager, rows = acme
    client = manager_client(manager)
    pack = pack_of(client, QUARTER)
    text = pdf_text(client.get(f"/reports/export.pdf?{QUARTER}"))
    # One filing: the PDF states the pack's report ID, and the pack links to its verify page.
    assert pack["report_id"] in text and pack["verify_url"].endswith(f"/verify/{pack['report_id']}")
    assert {p["report_id"] for p in pack["data_points"]} == {pack["report_id"]}
    assert pack["period"] == {"start": "2025-01-01", "end": "2025-03-31", "kind": "quarter"}

    # Shown figures, computed here from the rows.
    assert point(pack, "GRI 413-1", "volunteer_hours")["value"] == float(shown_hours(sum(r.minutes for r in rows)))
    assert point(pack, "B4SI outputs", "sessions")["value"] == len(rows)
    assert point(pack, "ESRS S3-4 §32(c)", "volunteers")["value"] == 8
    january = point(pack, "TEEI filing table", "volunteer_hours", "all", "2025-01-01")
    assert january["value"] == float(shown_hours(sum(r.minutes for r in rows if r.held_at.month == 1)))
    assert january["period"] == {"start": "2025-01-01", "end": "2025-01-31"}

    # Mentorship's two colleagues are hidden in the pack as in the PDF: no value, the code, the words;
    # and so is Language, which the shown total would otherwise give Mentorship away by.
    for programme in ("mentorship", "language"):
        for measure in ("volunteer_hours", "sessions", "volunteers"):
            hidden = point(pack, "TEEI filing table", measure, programme)
            assert hidden["value"] is None and hidden["masking"]["code"] == "hidden", (programme, measure)
            assert "fewer than 5 colleagues" in hidden["masking"]["text"]
    assert "TEEI Mentorship hidden hidden hidden hidden" in text
    february = point(pack, "TEEI filing table", "volunteer_hours", "mentorship", "2025-02-01")
    assert february["value"] is None and february["masking"]["code"] == "hidden"
    # Nothing the PDF hides is shown by the pack: its table's shown hours are the PDF's.
    assert pack_hours(pack) == printed_hours(text)

    # The disclosures come from crosswalk.DATA_POINTS, each once, with the filing's units.
    disclosures = {
        (p["disclosure"], p["measure"]) for p in pack["data_points"] if p["disclosure"] != "TEEI filing table"
    }
    assert ("GRI 413-1", "volunteer_hours") in disclosures and (
        "B4SI inputs",
        "community_investment_time",
    ) in disclosures
    assert ("ESRS S3-4 §32(c)", "volunteers") in disclosures and ("VSME B2/C2", "volunteer_hours") in disclosures
    money = point(pack, "GRI 201-1", "community_investment_time")
    assert money["value"] is None and money["masking"]["code"] == "not_set"  # no hourly cost set

    # The CSV is the same data points, in the same order.
    body = client.get(f"/reports/filing.csv?{QUARTER}").get_data(as_text=True)
    listed = list(csv.DictReader(io.StringIO(body)))
    assert len(listed) == len(pack["data_points"])
    for row, found in zip(listed, pack["data_points"], strict=True):
        assert (row["disclosure"], row["measure"], row["programme"], row["period_start"]) == (
            found["disclosure"],
            found["measure"],
            found["programme"],
            found["period"]["start"],
        )
        assert row["masking_code"] == found["masking"]["code"]
        assert (row["value"] == "") == (found["value"] is None)
        if row["value"]:
            assert Decimal(row["value"]) == Decimal(str(found["value"]))


def test_the_pack_values_time_with_the_hourly_cost_and_hides_it_with_the_total(
    company, insert_sessions, manager_client, db
):
    company_id, manager, staff = company("Acme Ltd", employees=6)
    insert_sessions([Row("language", person, company_id, oslo("2025-03-04T18:00"), 75) for person in staff])
    with db.write() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO company_report_settings (company_id, fiscal_year_start_month, hourly_cost, currency, "
                "company_time_percent, updated_at) VALUES (:c, 1, '500.00', 'EUR', 40, '2025-01-01T00:00:00.000000Z')"
            ),
            {"c": company_id},
        )
    client = manager_client(manager)
    pack = pack_of(client, "from=2025-03-01&to=2025-03-31&programme=all")
    hours = Decimal(shown_hours(6 * 75))  # 7.50
    company_time = (hours * 40 / 100).quantize(Decimal("0.01"))
    assert point(pack, "IRIS+ OI8429", "company_time_hours")["value"] == float(company_time)
    assert point(pack, "IRIS+ OI8429", "own_time_hours")["value"] == float(hours - company_time)
    money = point(pack, "B4SI inputs", "community_investment_time")
    assert (money["value"], money["unit"]) == (float(company_time * 500), "EUR")

    # April: one colleague. Every total, and all that is worked out from it, is hidden.
    insert_sessions([Row("language", staff[0], company_id, oslo("2025-04-04T18:00"), 60)])
    april = pack_of(client, "from=2025-04-01&to=2025-04-30&programme=all")
    for disclosure, measure in (
        ("GRI 413-1", "volunteer_hours"),
        ("GRI 413-1", "volunteers"),
        ("GRI 201-1", "community_investment_time"),
        ("IRIS+ OI8429", "company_time_hours"),
        ("B4SI outputs", "sessions"),
    ):
        found = point(april, disclosure, measure)
        assert found["value"] is None and found["masking"]["code"] == "hidden", (disclosure, measure)
    assert [p for p in april["data_points"] if p["value"] not in (None, 0)] == []  # nothing of one colleague


def test_only_a_filing_period_has_a_pack(acme, manager_client):
    _, manager, _ = acme
    client = manager_client(manager)
    assert 'id="pack-json"' in client.get(f"/reports?{QUARTER}").get_data(as_text=True)  # beside the PDF
    assert 'id="pack-json"' not in client.get("/reports?from=2025-01-01&to=2025-03-30").get_data(as_text=True)
    for query in ("from=2025-01-01&to=2025-03-31&programme=language", "from=2025-01-01&to=2025-03-30&programme=all"):
        for fmt in ("json", "csv"):
            response = client.get(f"/reports/filing.{fmt}?{query}")
            assert response.status_code == 400, (fmt, query)
            assert "A filing PDF covers a whole month, quarter or year that has ended" in response.get_data(
                as_text=True
            )


def corrections_of(pack: dict) -> dict[str, dict]:
    return {p["measure"]: p for p in pack["data_points"] if p["disclosure"] == "TEEI corrections"}


def test_late_records_are_the_packs_corrections_as_the_pdf_states_them(company, insert_sessions, manager_client):
    """January is filed; six colleagues' January sessions arrive late; the quarter prints January as
    filed, and its pack states the late records as its PDF does: added to the filed figures, every
    verified hour is accounted for."""
    acme, manager, staff = company("Acme Ltd", employees=12)
    first = insert_sessions(staff_rows(staff, acme, "language", "2025-01-14", staff[:6], 45))
    client = manager_client(manager)
    assert corrections_of(pack_of(client, "from=2025-01-01&to=2025-01-31&programme=all")) == {}, "nothing late yet"
    late = insert_sessions(
        staff_rows(staff, acme, "mentorship", "2025-01-21", staff[6:12], 75), received_at="2099-01-01T00:00:00.000000Z"
    )
    pack = pack_of(client, QUARTER)
    stated = corrections_of(pack)
    assert {m: (p["value"], p["unit"], p["masking"]["code"]) for m, p in stated.items()} == {
        "session_records": (6, "records", "shown"),
        "volunteers": (6, "persons", "shown"),
        "volunteer_hours": (float(shown_hours(sum(r.minutes for r in late))), "h", "shown"),
        "sessions": (6, "sessions", "shown"),
    }
    whole = {"start": pack["period"]["start"], "end": pack["period"]["end"]}
    assert all(p["period"] == whole and p["programme"] == "all" for p in stated.values())
    filed = point(pack, "TEEI filing table", "volunteer_hours")["value"]
    assert filed == float(shown_hours(sum(r.minutes for r in first)))
    every = sum(r.minutes for r in first + late)
    assert Decimal(str(filed)) + Decimal(str(stated["volunteer_hours"]["value"])) == Decimal(shown_hours(every))
    text = pdf_text(client.get(f"/reports/export.pdf?{QUARTER}"))
    assert f"for 6 colleagues: +{shown_hours(sum(r.minutes for r in late))} hours" in text, "the PDF says the same"


def test_one_colleagues_late_records_are_hidden_in_the_pack(company, insert_sessions, manager_client):
    acme, manager, staff = company("Acme Ltd", employees=8)
    insert_sessions(staff_rows(staff, acme, "language", "2025-01-14", staff[:6]))
    client = manager_client(manager)
    pack_of(client, "from=2025-01-01&to=2025-01-31&programme=all")
    insert_sessions(
        staff_rows(staff, acme, "language", "2025-01-28", staff[:1], 360), received_at="2099-01-01T00:00:00.000000Z"
    )
    stated = corrections_of(pack_of(client, QUARTER))
    assert set(stated) == {"session_records", "volunteers", "volunteer_hours", "sessions"}
    assert all(p["value"] is None and p["masking"]["code"] == "hidden" for p in stated.values())
    lines = list(csv.DictReader(io.StringIO(client.get(f"/reports/filing.csv?{QUARTER}").get_data(as_text=True))))
    assert [r["value"] for r in lines if r["disclosure"] == "TEEI corrections"] == ["", "", "", ""]
