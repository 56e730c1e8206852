"""Builders for report tests: companies with colleagues, and attendance rows written straight to the table.

Rows are inserted as the attendance area stores them (migrations/0006); each builder returns what
it inserted, so tests compute expected figures in Python over that list, independently of the SQL.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from fractions import Fraction
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import sqlalchemy as sa
from jsonschema import Draft202012Validator, FormatChecker

from portal.core.clock import iso

OSLO = ZoneInfo("Europe/Oslo")


@dataclass(frozen=True)
class Row:
    platform: str
    user_id: int
    company_id: int
    held_at: datetime  # aware
    minutes: int
    status: str = "attended"
    own_time: bool = False  # held in the volunteer's own time (issue 50)


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def oslo(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=OSLO)


@pytest.fixture
def company(db, make_user):
    """company(name, employees=n) -> (company_id, manager_email, [employee ids]); memberships from 2020."""

    def build(name="Acme Ltd", employees=3, since="2020-01-01T00:00:00.000000Z"):
        manager = make_user("manager", company=name)
        ids = []
        for n in range(employees):
            email = f"vol{n}@{name.split()[0].lower()}.example"
            make_user("employee", company=name, email=email)
            with db.write() as conn:
                user_id = conn.execute(sa.text("SELECT id FROM users WHERE email = :e"), {"e": email}).scalar_one()
                conn.execute(
                    sa.text("UPDATE users SET name = :n WHERE id = :u"),
                    {"n": f"{name.split()[0]} Volunteer {n:02d}", "u": user_id},
                )
                conn.execute(
                    sa.text("UPDATE company_memberships SET started_at = :s WHERE user_id = :u"),
                    {"s": since, "u": user_id},
                )
            ids.append(user_id)
        with db.read() as conn:
            company_id = conn.execute(
                sa.text("SELECT company_id FROM users WHERE email = :e"), {"e": manager}
            ).scalar_one()
        return company_id, manager, ids

    return build


@pytest.fixture
def insert_sessions(db):
    """insert_sessions([Row, ...], received_at=...) writes attendance rows; returns the list."""
    counter = itertools.count(1)

    def insert(rows, received_at="2026-01-01T00:00:00.000000Z"):
        with db.write() as conn:
            emails = dict(conn.execute(sa.text("SELECT id, email FROM users")).all())
            conn.execute(
                sa.text("""
                INSERT INTO attendance_sessions (platform, session_id, volunteer_email, user_id, company_id, held_at,
                                                 minutes, status, updated_at, received_at, source, own_time)
                VALUES (:platform, :sid, :email, :user_id, :company_id, :held_at, :minutes, :status, :held_at,
                        :received_at, 'api', :own_time)
            """),
                [
                    {
                        "platform": r.platform,
                        "sid": f"s-{next(counter)}",
                        "email": emails[r.user_id],
                        "user_id": r.user_id,
                        "company_id": r.company_id,
                        "held_at": iso(r.held_at),
                        "minutes": r.minutes,
                        "status": r.status,
                        "received_at": received_at,
                        "own_time": int(r.own_time),
                    }
                    for r in rows
                ],
            )
        return list(rows)

    return insert


@pytest.fixture
def manager_client(client, auth):
    def sign_in(email):
        auth.login(email)
        return client

    return sign_in


def shown_hours(minutes: int) -> str:
    """Hours as a report must show them, computed apart from the portal's code: integer hundredths of an
    hour, half up, grouped thousands."""
    hundredths = (minutes * 100 * 2 + 60) // 120  # minutes / 60 in hundredths, + 0.5, floored
    return f"{hundredths // 100:,}.{hundredths % 100:02d}"


DOCS = Path(__file__).resolve().parents[2] / "docs"
VALIDATOR = Draft202012Validator(
    json.loads((DOCS / "filing-pack.schema.json").read_text()), format_checker=FormatChecker()
)


def pack_of(client, query: str) -> dict:
    """The JSON pack of a filing, validated against the schema (every pack a test makes is)."""
    response = client.get(f"/reports/filing.json?{query}")
    assert response.status_code == 200 and response.mimetype == "application/json", response.status_code
    assert response.is_streamed  # written a data point at a time
    pack = json.loads(response.get_data(as_text=True))
    errors = sorted(VALIDATOR.iter_errors(pack), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    return pack


def pack_hours(pack: dict) -> dict[tuple, Fraction]:
    """The hours a pack shows, keyed as test_filing_disclosure keys a PDF's: (first, last, programme)."""
    return {
        (p["period"]["start"][:7], p["period"]["end"][:7], p["programme"]): Fraction(str(p["value"]))
        for p in pack["data_points"]
        if p["disclosure"] == "TEEI filing table" and p["measure"] == "volunteer_hours" and p["value"] is not None
    }
