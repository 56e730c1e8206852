"""The live report's hours by department (issue 48, item 3); the filing PDF shows none."""

from __future__ import annotations

import re

import sqlalchemy as sa

from .conftest import Row, oslo, shown_hours

QUERY = "from=2025-01-01&to=2025-12-31&programme=all"


def by_department(page: str) -> list[tuple[str, str, str]]:
    if 'id="by-department"' not in page:
        return []
    table = page[page.index('id="by-department"') : page.index("</table>", page.index('id="by-department"'))]
    table = re.sub(r"<a [^>]*>|</a>", "", table)  # each figure is a link to its records (issue 50)
    return re.findall(
        r'<th scope="row">([^<]+)</th><td class="num"[^>]*>([^<]+)</td><td class="num"[^>]*>(\d+)</td>', table
    )


def test_hours_are_summed_by_each_volunteers_department(company, insert_sessions, manager_client, db):
    acme, manager, staff = company("Acme Ltd", employees=4)
    client = manager_client(manager)
    insert_sessions(
        [
            Row("language", staff[0], acme, oslo("2025-03-04T18:00"), 90),
            Row("language", staff[1], acme, oslo("2025-03-05T18:00"), 45),
            Row("mentorship", staff[2], acme, oslo("2025-03-06T18:00"), 60),
            Row("language", staff[3], acme, oslo("2025-03-07T18:00"), 30),
        ]
    )
    assert by_department(client.get(f"/reports?{QUERY}").get_data(as_text=True)) == [], "no departments yet"

    with db.write() as conn:
        for user_id, department in ((staff[0], "Finance"), (staff[1], "Finance"), (staff[2], "Sales")):
            conn.execute(sa.text("UPDATE users SET department = :d WHERE id = :u"), {"d": department, "u": user_id})

    assert by_department(client.get(f"/reports?{QUERY}").get_data(as_text=True)) == [
        ("Finance", shown_hours(135), "2"),
        ("Sales", shown_hours(60), "1"),
        ("No department", shown_hours(30), "1"),
    ]
