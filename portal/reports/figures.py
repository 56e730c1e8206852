"""The report's figures: totals, by programme, by local month and per volunteer, aggregated in SQL.

Only `attended` sessions count, scoped by the company the volunteer belonged to when the session
was held (`attendance_sessions.company_id`). Months are local months: their UTC bounds are
computed in Python and handed to SQL as one JSON parameter, so grouping never depends on UTC.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from typing import NamedTuple
from zoneinfo import ZoneInfo

import sqlalchemy as sa

from portal.core.db import json_array
from portal.core.i18n import ENGLISH, N_, number, translate, translate_plural
from portal.core.programmes import PROGRAMMES
from portal.reports.disclosure import is_small
from portal.reports.hours import ROUNDING_NOTE, hours_of, rounding_gap
from portal.reports.selection import ReportQuery

DENOMINATOR = "employees"
# Translated where it is shown.
DENOMINATOR_TEXT = N_(
    "colleagues with an employee account at the company (an accepted invitation) "
    "at any time in the period, counting also anyone who volunteered in it"
)


@dataclass
class Cell:
    minutes: int = 0
    sessions: int = 0
    volunteers: int = 0

    @property
    def hours(self) -> Decimal:
        return hours_of(self.minutes)


@dataclass
class MonthRow:
    label: str
    start: str
    end: str
    total: Cell
    programmes: dict[str, Cell]
    # Volunteers by the set of programmes they attended ("language", "language+mentorship"): what the
    # filing mask needs to see that counts of 5 and 5 with a total of 9 reveal one colleague in both.
    groups: dict[str, int] = field(default_factory=dict)


@dataclass
class VolunteerRow:
    user_id: int
    name: str
    email: str
    minutes: int
    sessions: int
    programmes: list[str]

    @property
    def hours(self) -> Decimal:
        return hours_of(self.minutes)

    @property
    def programme_text(self) -> str:
        return ", ".join(PROGRAMMES[p].replace("TEEI ", "") for p in self.programmes)


@dataclass
class Figures:
    """Every figure of one report: what the page shows, the exports carry and a close freezes."""

    total: Cell
    employees: int
    programmes: dict[str, Cell]
    months: list[MonthRow]
    volunteers: list[VolunteerRow] = field(default_factory=list)
    groups: dict[str, int] = field(default_factory=dict)  # as MonthRow.groups, for the whole period
    # Volunteers of each calendar quarter inside a longer period ("2025-01..2025-03": {"language": 6,
    # "all": 9}): groups a quarter's own filing prints, which the longer one must not give away.
    spans: dict[str, dict[str, int]] = field(default_factory=dict)
    # For the filing mask, per printed area ("2025-01..2025-03:language", disclosure.Area): the
    # largest one colleague's minutes in it (dominance), and for an area with exactly one volunteer
    # that colleague's opaque key (`contributor_key`), so every release can group a colleague's cells.
    largest: dict[str, int] = field(default_factory=dict)
    alone: dict[str, str] = field(default_factory=dict)
    # Volunteers whose own-time hours are counted in the period (they chose so: OWN_TIME_COUNTED);
    # None where it is not known (a month of a year closed before it was kept).
    own_time_volunteers: int | None = None

    @property
    def participation(self) -> float | None:
        return round(100 * self.total.volunteers / self.employees, 1) if self.employees else None

    def participation_of(self, cell: Cell) -> float | None:
        return round(100 * cell.volunteers / self.employees, 1) if self.employees else None

    @property
    def listed_months(self) -> list[MonthRow]:
        """The months from the first with a session on: empty months before it say nothing."""
        first = next((i for i, m in enumerate(self.months) if m.total.sessions), len(self.months))
        return self.months[first:]

    @property
    def rounding_note(self) -> str | None:
        return self.rounding_note_in(ENGLISH)

    def rounding_note_in(self, language: str) -> str | None:
        """A footnote when a shown total differs from the sum of its shown rows, else None."""
        gaps = [
            rounding_gap((m.total.minutes for m in self.months), self.total.minutes),
            rounding_gap((c.minutes for c in self.programmes.values()), self.total.minutes),
            *(rounding_gap((c.minutes for c in m.programmes.values()), m.total.minutes) for m in self.months),
            *(
                rounding_gap((m.programmes[p].minutes for m in self.months), c.minutes)
                for p, c in self.programmes.items()
            ),
        ]
        if self.volunteers:
            gaps.append(rounding_gap((v.minutes for v in self.volunteers), self.total.minutes))
        largest = max((abs(g) for g in gaps), default=Decimal(0))
        return translate(language, ROUNDING_NOTE, gap=number(largest, language, 2)) if largest else None

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Figures:
        return cls(
            total=Cell(**data["total"]),
            employees=data["employees"],
            programmes={k: Cell(**v) for k, v in data["programmes"].items()},
            months=[
                MonthRow(
                    m["label"],
                    m["start"],
                    m["end"],
                    Cell(**m["total"]),
                    {k: Cell(**v) for k, v in m["programmes"].items()},
                    m.get("groups", {}),
                )
                for m in data["months"]
            ],
            volunteers=[VolunteerRow(**v) for v in data["volunteers"]],
            groups=data.get("groups", {}),
            spans=data.get("spans", {}),
            largest=data.get("largest", {}),
            alone=data.get("alone", {}),
            own_time_volunteers=data.get("own_time_volunteers"),
        )


# Issue 50, item 4: a session in working time counts; one in the volunteer's own time counts only
# when the volunteer's latest choice (own_time_choices, migration 0056) is to include it. The list of
# those volunteers is read once per statement (the subquery does not depend on the row).
OWN_TIME_COUNTED = """
    (a.own_time = 0 OR a.user_id IN (
        SELECT c.user_id FROM own_time_choices c
        WHERE c.counted = 1 AND c.id = (SELECT MAX(d.id) FROM own_time_choices d WHERE d.user_id = c.user_id)))
"""


def counted_scope(start: str = ":start", end: str = ":end", *, programmes: bool = True) -> str:
    """The one WHERE of what a figure counts: the company's attended sessions held in [start, end),
    in the chosen programmes (`:programmes`, a JSON array; `programmes=False` where the statement
    splits by programme itself), in working time or in own time the volunteer chose to count. Every
    figure reads through it, and so does the list of session records that a figure opens on the
    report page (queries.DRILL_*): a figure and its list cannot disagree on what they count."""
    chosen = "AND a.platform IN (SELECT value FROM json_each(:programmes))" if programmes else ""
    return f"""
    a.company_id = :company_id AND a.held_at >= {start} AND a.held_at < {end} AND a.status = 'attended'
    {chosen} AND {OWN_TIME_COUNTED}
"""


COUNTED_SCOPE = counted_scope()

OWN_TIME_VOLUNTEERS = sa.text(f"""
    SELECT COUNT(DISTINCT a.user_id) FROM attendance_sessions a WHERE {COUNTED_SCOPE} AND a.own_time = 1
""")


def _month_index(months: int) -> str:
    """A session's month in the period (0, 1, ...): a sum of comparisons with the months' UTC starts
    :b1..:bN, handed over by read_figures."""
    return " + ".join(f"(a.held_at >= :b{i})" for i in range(1, months)) or "0"


def _in_month(index: int, months: int) -> str:
    """Whether a session (inside the period) was held in month `index` of it."""
    after = f"a.held_at >= :b{index}" if index else "1"
    before = f"a.held_at < :b{index + 1}" if index + 1 < months else "1"
    return f"{after} AND {before}"


def _volunteers_of(members_only: bool) -> tuple[str, str]:
    """The FROM and the extra WHERE of a statement that reads a volunteer at a time, in user_id order.

    Reading the volunteers of the company's memberships through attendance_sessions_user seeks each
    volunteer's range of the period in turn, so the rows come grouped and the grouping sorts nothing:
    a sort of a year's rows would hold them all in memory (libSQL keeps temporary data there). The
    plain form (`members_only=False`), used only if a session's volunteer has no membership row
    (which attribution never produces), lets SQLite sort."""
    if not members_only:
        return "attendance_sessions a", ""
    return (
        "attendance_sessions a INDEXED BY attendance_sessions_user",
        "AND a.user_id IN (SELECT m.user_id FROM company_memberships m WHERE m.company_id = :company_id)",
    )


def per_volunteer_sql(months: int, *, members_only: bool, names: bool = False) -> sa.TextClause:
    """One row per volunteer, in user_id order, with for each programme (`language_minutes`,
    `language_sessions`, `language_months`, ...) the minutes, the sessions and a bitmask of the
    months they were active in it (bit i: month i of the period; NULL without a session in it)."""
    sums = ",\n".join(
        f"SUM(CASE WHEN a.platform = '{p}' THEN a.minutes ELSE 0 END) AS {p}_minutes, "
        f"SUM(a.platform = '{p}') AS {p}_sessions, "
        f"SUM(DISTINCT CASE WHEN a.platform = '{p}' THEN 1 << ({_month_index(months)}) END) AS {p}_months"
        for p in PROGRAMMES
    )
    # The names read per volunteer as the groups come out.
    person = (
        ", (SELECT u.name FROM users u WHERE u.id = a.user_id) AS name,"
        " (SELECT u.email FROM users u WHERE u.id = a.user_id) AS email"
        if names
        else ""
    )
    source, members = _volunteers_of(members_only)
    return sa.text(f"""
        SELECT a.user_id, {sums} {person}
        FROM {source} WHERE {COUNTED_SCOPE} {members}
        GROUP BY a.user_id ORDER BY a.user_id
    """)


def per_month_sql(months: int, *, members_only: bool = True) -> sa.TextClause:
    """One row per volunteer, in user_id order, with their minutes in each programme and month of
    the period (`language_0`, `language_1`, ...): what the filing mask needs to see who is alone in
    a group and who gives most of its hours, read one volunteer at a time (`area_facts`)."""
    sums = ",\n".join(
        f"SUM(CASE WHEN a.platform = '{p}' AND {_in_month(i, months)} THEN a.minutes ELSE 0 END) AS {p}_{i}"
        for p in PROGRAMMES
        for i in range(months)
    )
    source, members = _volunteers_of(members_only)
    return sa.text(f"""
        SELECT a.user_id, {sums}
        FROM {source} WHERE {COUNTED_SCOPE} {members}
        GROUP BY a.user_id ORDER BY a.user_id
    """)


def contributor_key(company_id: int, user_id: int) -> str:
    """A colleague as a filing record names them: an opaque key, the same in every release of the
    company (not a name, not the account's id; not a secret either: the database holds the sessions)."""
    return hashlib.sha256(f"teei-filing-contributor|{company_id}|{user_id}".encode()).hexdigest()[:16]


def area_facts(
    company_id: int, rows: list[MonthRow], programmes, per_month, spans
) -> tuple[dict[str, int], dict[str, str]]:
    """For every area a filing prints or protects (each month, the period, each quarter inside it;
    each programme and all): the largest one colleague's minutes, and who is alone in it.

    `per_month` (per_month_sql) has a row per volunteer and is read once, keeping one volunteer's
    months, so memory does not grow with the company's colleagues or rows (issue 50's pack)."""
    keys = [m.start[:7] for m in rows]
    ranges = [(i, i) for i in range(len(keys))] + [(0, len(keys) - 1)]
    ranges += [(keys.index(span[:7]), keys.index(span[-7:])) for span in spans if span[:7] in keys]
    areas = {  # by key: with one programme, the programme and "all of them" are one area
        f"{keys[first]}..{keys[last]}:{chosen[0] if len(chosen) == 1 else 'all'}": (first, last, chosen)
        for first, last in dict.fromkeys(ranges)
        for chosen in [*([p] for p in programmes), list(programmes)]
    }
    largest = dict.fromkeys(areas, 0)
    people = dict.fromkeys(largest, 0)
    last_seen: dict[str, int] = {}

    def settle(user_id: int, months: dict[str, list[int]]) -> None:
        # Running sums per programme: an area's minutes are two lookups, not a walk over its months.
        running = {}
        for platform, minutes in months.items():
            total, sums = 0, [0]
            for value in minutes:
                total += value
                sums.append(total)
            running[platform] = sums
        for key, (first, last, chosen) in areas.items():
            minutes = sum(running[p][last + 1] - running[p][first] for p in chosen if p in running)
            if minutes:
                largest[key] = max(largest[key], minutes)
                people[key] += 1
                last_seen[key] = user_id

    for row in per_month:
        found = row._mapping
        months = {p: [found[f"{p}_{i}"] for i in range(len(keys))] for p in programmes}
        settle(row.user_id, {p: minutes for p, minutes in months.items() if any(minutes)})
    alone = {key: contributor_key(company_id, last_seen[key]) for key, count in people.items() if count == 1}
    return largest, alone


# Every month's sums per programme in one statement (on a libSQL server, one request, not one a
# month): for each month a range scan of the covering report index, nothing to sort. A scalar
# subquery returns one value, so its four sums travel as a JSON array, in MONTH_SUM_FIELDS order.
MONTH_SUMS = sa.text(f"""
    SELECT (
        SELECT json_array(
            COALESCE(SUM(CASE WHEN a.platform = 'language' THEN a.minutes END), 0),
            COALESCE(SUM(a.platform = 'language'), 0),
            COALESCE(SUM(CASE WHEN a.platform = 'mentorship' THEN a.minutes END), 0),
            COALESCE(SUM(a.platform = 'mentorship'), 0))
        FROM attendance_sessions a
        WHERE {counted_scope("month.value ->> '$[0]'", "month.value ->> '$[1]'", programmes=False)}
    ) AS sums
    FROM json_each(:months) AS month ORDER BY month.key
""")
MONTH_SUM_FIELDS = ("language_minutes", "language_sessions", "mentorship_minutes", "mentorship_sessions")

EMPLOYEES_IN_PERIOD = sa.text("""
    SELECT DISTINCT m.user_id
    FROM company_memberships m JOIN users u ON u.id = m.user_id AND u.role = 'employee'
    WHERE m.company_id = :company_id AND m.started_at < :end AND (m.ended_at IS NULL OR m.ended_at > :start)
""")


def read_figures(
    conn: sa.Connection,
    *,
    company_id: int,
    query: ReportQuery,
    tz: ZoneInfo,
    listed: bool = True,
    facts: bool = False,
) -> Figures:
    """The figures, read on the caller's transaction (a year close reads inside its write).

    listed=False reads nobody's row: no names, no addresses, no per-volunteer list (a filing, a
    report email and last year's totals list nobody), so memory does not grow with the company's
    colleagues. facts=True reads what a filing's mask needs besides (`largest`, `alone`: one more
    statement); the page and the working copies need none.
    """
    start, end = query.period.utc_bounds(tz)
    months = query.period.months()
    bounds = [m.utc_bounds(tz) for m in months]
    params = {
        "company_id": company_id,
        "start": start,
        "end": end,
        "programmes": json_array(query.programmes),
        **{f"b{i}": bounds[i][0] for i in range(1, len(months))},
    }
    rows = _month_rows(conn, company_id, months, bounds, query.programmes)
    # A session held before a volunteer's first membership counts for that company, so the
    # denominator includes every active volunteer: the rate never exceeds 100%.
    members = set(conn.execute(EMPLOYEES_IN_PERIOD, params).scalars())
    spans = _quarter_masks(rows)
    for members_only in (True, False):  # the plain form only if a session's volunteer is no member
        tally = _Tally(rows, query.programmes, spans, members, listed)
        tally.read(conn.execute(per_volunteer_sql(len(months), members_only=members_only, names=listed), params))
        if tally.total().sessions == sum(m.total.sessions for m in rows):
            break
    tally.count_months(rows)
    largest: dict[str, int] = {}
    alone: dict[str, str] = {}
    if facts:
        per_month = conn.execute(per_month_sql(len(months), members_only=members_only), params)
        largest, alone = area_facts(company_id, rows, query.programmes, per_month, tally.spans)
    own_time = conn.execute(OWN_TIME_VOLUNTEERS, params).scalar()
    return Figures(
        tally.total(),
        len(members) + tally.not_members,
        tally.programmes,
        rows,
        tally.listed(),
        dict(tally.groups),
        tally.spans,
        largest,
        alone,
        own_time,
    )


class Attended(NamedTuple):
    """One volunteer's sessions in one programme over the period (`months`: bit i, month i)."""

    platform: str
    minutes: int
    sessions: int
    months: int


class _Tally:
    """The per-volunteer statement's rows (one a volunteer) folded into counters whose size depends
    on the programmes and months, not on the number of colleagues; the per-volunteer list only when
    `listed`."""

    def __init__(self, rows: list[MonthRow], programmes, spans: dict[str, int], members: set[int], listed: bool):
        self.programmes = {p: Cell() for p in programmes}
        self.months = len(rows)
        self.span_masks = spans
        self.spans = {key: {} for key in spans}
        self.members = members
        self.not_members = 0  # volunteers without a membership in the period: counted as employees too
        self.volunteers = 0
        self.active: Counter = Counter()  # a volunteer's months (bitmask) -> volunteers with that pattern
        self.active_in: dict[str, Counter] = {p: Counter() for p in programmes}
        self.groups: Counter = Counter()  # the period's, as MonthRow.groups
        self.month_groups: list[Counter] = [Counter() for _ in rows]
        self.people: list[VolunteerRow] | None = [] if listed else None

    def read(self, found) -> None:
        """per_volunteer_sql's rows, a volunteer each: (programme, minutes, sessions, months) for
        each programme they attended."""
        for row in found:
            values = row._mapping
            platforms = [
                Attended(p, values[f"{p}_minutes"], values[f"{p}_sessions"], values[f"{p}_months"])
                for p in self.programmes
                if values[f"{p}_sessions"]
            ]
            self._settle(row.user_id, platforms, values.get("name"), values.get("email"))

    def _settle(self, user_id: int, platforms: list[Attended], name: str | None, email: str | None) -> None:
        """One volunteer's rows (one a programme) into every counter."""
        active = 0
        for row in platforms:
            cell = self.programmes[row.platform]
            cell.minutes += row.minutes
            cell.sessions += row.sessions
            cell.volunteers += 1
            self.active_in[row.platform][row.months] += 1
            active |= row.months
        self.volunteers += 1
        self.active[active] += 1
        self.not_members += user_id not in self.members
        chosen = sorted(platforms, key=lambda row: row.platform)
        self.groups["+".join(row.platform for row in chosen)] += 1
        for index in range(self.months):
            if active >> index & 1:
                self.month_groups[index]["+".join(row.platform for row in chosen if row.months >> index & 1)] += 1
        for key, quarter in self.span_masks.items():
            counts = self.spans[key]
            inside = [row.platform for row in platforms if row.months & quarter]
            for platform in inside:
                counts[platform] = counts.get(platform, 0) + 1
            counts["all"] = counts.get("all", 0) + bool(inside)
        if self.people is not None:
            email = email or ""
            self.people.append(
                VolunteerRow(
                    user_id,
                    name or email,
                    email,
                    sum(row.minutes for row in platforms),
                    sum(row.sessions for row in platforms),
                    [row.platform for row in chosen],
                )
            )

    def count_months(self, rows: list[MonthRow]) -> None:
        """Volunteers a month, from the bitmasks: a volunteer in both programmes counts once in the total."""
        _count_active(rows, self.active, lambda month: month.total)
        for p, found in self.active_in.items():
            _count_active(rows, found, lambda month, p=p: month.programmes[p])
        for month, groups in zip(rows, self.month_groups, strict=True):
            month.groups = dict(groups)

    def total(self) -> Cell:
        cells = self.programmes.values()
        return Cell(sum(c.minutes for c in cells), sum(c.sessions for c in cells), self.volunteers)

    def listed(self) -> list[VolunteerRow]:
        return sorted(self.people or [], key=lambda v: (-v.minutes, v.name.lower()))


def _quarter_masks(rows: list[MonthRow]) -> dict[str, int]:
    """Each whole calendar quarter inside a period longer than one ("2025-01..2025-03"), as the
    bitmask of its months: a quarter's own filing prints its groups, which the longer one must not
    give away."""
    found = {}
    if len(rows) <= 3:
        return found
    for index, month in enumerate(rows[:-2]):
        if int(month.start[5:7]) % 3 == 1 and month.start[8:] == "01" and rows[index + 2].end.endswith(("-31", "-30")):
            found[f"{month.start[:7]}..{rows[index + 2].start[:7]}"] = 0b111 << index
    return found


def _month_rows(conn: sa.Connection, company_id: int, months, bounds, programmes) -> list[MonthRow]:
    """Each month's minutes and sessions by programme (volunteers are counted after, from the bitmasks)."""
    rows = [
        MonthRow(m.label, m.start.isoformat(), m.end.isoformat(), Cell(), {p: Cell() for p in programmes})
        for m in months
    ]
    found = conn.execute(MONTH_SUMS, {"company_id": company_id, "months": json.dumps(bounds)}).scalars()
    for row, packed in zip(rows, found, strict=True):
        sums = dict(zip(MONTH_SUM_FIELDS, json.loads(packed), strict=True))
        for p in programmes:
            cell = row.programmes[p]
            cell.minutes, cell.sessions = sums[f"{p}_minutes"], sums[f"{p}_sessions"]
            row.total.minutes += cell.minutes
            row.total.sessions += cell.sessions
    return rows


def _count_active(rows: list[MonthRow], patterns: Counter, cell_of) -> None:
    """Volunteers a month from the counted bitmasks of active months (many volunteers share a
    pattern, so each pattern is counted once)."""
    for mask, count in patterns.items():
        for index, month in enumerate(rows):
            if mask >> index & 1:
                cell_of(month).volunteers += count


def counted_time_text(figures: Figures, language: str, *, masked: bool = False, count_hidden: bool = False) -> str:
    """Which hours the report counts (issue 50, item 4), in `language`. `masked`: a filing output's
    wording: the number of volunteers whose own-time hours count is a group like any other, so it is
    stated only when it, and the volunteers whose own-time hours do not count, are each none or 5 or
    more, and the period's count of volunteers is shown (else the difference would give it away)."""
    own = figures.own_time_volunteers
    if own == 0:
        return translate(
            language,
            "Counts hours in working time. No own-time hours are included: a volunteer's own-time hours count "
            "only when they choose to include them.",
        )
    rest = None if own is None else figures.total.volunteers - own
    if own is None or (masked and (count_hidden or is_small(own) or is_small(rest))):
        return translate(
            language,
            "Counts hours in working time, and own-time hours of the volunteers who chose to include them "
            "(their number is not shown: it would describe fewer than 5 colleagues).",
        )
    return translate_plural(
        language,
        "Counts hours in working time, and own-time hours of the %(num)s volunteer who chose to include them.",
        "Counts hours in working time, and own-time hours of the %(num)s volunteers who chose to include them.",
        own,
        num=number(own, language),
    )
