"""What is filed: whole periods that have ended, for all programmes, each filed once with one mask.

A filing output (a PDF downloaded, a report email's attachment, a closed year) is recorded in
`filing_releases` the first time its period is filed, with its figures and what it showed. A later
copy of the same period is made from that record, so two downloads never differ by a late session;
a new period's mask treats everything the company released before as known (disclosure.py).

One filing, one report ID (issue 47, item 2): the record keeps the ID made when the period is first
filed, and every copy states it (each PDF, each report email, the year's closure, /verify/<ID>). It
is stored rather than derived from the filing's data: a hash of the company, the period and the
filing time would be as stable, but its data are no secret, while a random part keeps a public
/verify page from being walked through every company's periods.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import asdict, dataclass, field
from datetime import date, timedelta
from zoneinfo import ZoneInfo

import sqlalchemy as sa

from portal.core.i18n import N_
from portal.core.periods import Period, add_months, fiscal_year_containing, month_period, quarter_period
from portal.reports.disclosure import (
    ALL,
    EMPLOYEES,
    THRESHOLD,
    Area,
    CountRow,
    Figure,
    Release,
    choose_counts_hidden,
    choose_hidden,
    released_by,
)
from portal.reports.figures import Cell, Figures, MonthRow, counted_scope, read_figures
from portal.reports.goals import Comparison, YearBefore, goal_year, read_goal, year_before
from portal.reports.queries import read_report_settings
from portal.reports.selection import ReportQuery

# Translated where it is shown.
NOT_FILED = N_(
    "A filing PDF covers a whole month, quarter or year that has ended, for all programmes. "
    "This selection stays on the page and in the CSV and Excel files, your working copies."
)


def filing_period(period: Period, today: date, fiscal_start_month: int) -> Period | None:
    """The period as a filing period (a whole ended month, calendar quarter, calendar or fiscal
    year), or None when it is not one."""
    if period.end >= today or period.start.day != 1:
        return None
    for candidate in (
        month_period(period.start),
        quarter_period(period.start),
        Period(period.start, add_months(period.start, 12) - timedelta(days=1), str(period.start.year), "year"),
        fiscal_year_containing(period.start, fiscal_start_month),
    ):
        if (candidate.start, candidate.end) == (period.start, period.end):
            if candidate.kind == "year" and period.start.month != 1:
                continue
            return candidate
    return None


def filed_period(start: date, end: date) -> Period:
    """A filing's period named as its kind (a month, a quarter, a calendar or fiscal year): a fiscal
    year is filed from its first month, so that month is the fiscal year's start."""
    found = filing_period(Period(start, end, ""), end + timedelta(days=1), start.month)
    return found or Period(start, end, f"{start} – {end}")


@dataclass
class FilingMask:
    """The mask of one filing output, as its PDF and its email read it (no group sizes)."""

    hidden: set[str] = field(default_factory=set)
    counts_hidden: set[str] = field(default_factory=set)

    def hides(self, first: str, last: str, programme: str = ALL) -> bool:
        return Area(first, last, programme).key in self.hidden

    def hides_count(self, first: str, last: str, programme: str = ALL) -> bool:
        key = Area(first, last, programme).key
        return key in self.hidden or key in self.counts_hidden

    def hides_employees(self, first: str, last: str) -> bool:
        return f"{EMPLOYEES}:{first}..{last}" in self.counts_hidden

    def hides_participation(self, first: str, last: str) -> bool:
        """Participation is volunteers over colleagues: hidden when either of them is."""
        return self.hides_count(first, last) or self.hides_employees(first, last)

    def to_dict(self) -> dict:
        return {"hidden": sorted(self.hidden), "counts_hidden": sorted(self.counts_hidden)}

    @classmethod
    def from_dict(cls, data: dict) -> FilingMask:
        return cls(set(data["hidden"]), set(data["counts_hidden"]))


@dataclass(frozen=True)
class FiledCorrections:
    """What a filing states of session records that arrived, for months an earlier filing printed,
    after that filing: they are not in the months it prints (those stay as first filed). A group like
    any other: its size only for 5 or more colleagues (`shown`); otherwise it is stated that such
    corrections exist, and they are carried to the next filing of those months, until they are
    5 colleagues or more."""

    records: int
    people: int
    minutes: int
    sessions: int
    shown: bool

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict | None) -> FiledCorrections | None:
        return None if data is None else cls(**data)


@dataclass
class Filed:
    figures: Figures
    mask: FilingMask
    corrections: FiledCorrections | None = None  # None: nothing arrived late for the months it reprints
    report_id: str = ""  # the filing's one ID, on every copy
    filed_at: str = ""  # when the period was first filed: every copy's "as of"
    comparison: Comparison | None = None  # its goal and year before (goals.py); None: filed before they were


VERIFY_PATH = "/verify/"  # + a report ID: the public page that confirms a filing (reports/routes.py)
REPORT_ID_FORM = re.compile(r"^TEEI-[0-9]{1,12}-[0-9]{8}-[0-9]{8}-[0-9A-F]{8}$")


def verify_url(base_url: str, report_id: str) -> str:
    """Where anyone checks a filing: printed, with its QR code, on every copy of it."""
    return f"{base_url.rstrip('/')}{VERIFY_PATH}{report_id}"


def new_report_id(company_id: int, period: Period) -> str:
    """A new filing's ID: the company and period to read, and a random part so an ID cannot be
    guessed (the verify page is public)."""
    return f"TEEI-{company_id}-{period.start:%Y%m%d}-{period.end:%Y%m%d}-{secrets.token_hex(4).upper()}"


def month_keys(figures: Figures) -> list[str]:
    return [m.start[:7] for m in figures.months]


def _figures_of(figures: Figures) -> dict[str, Figure]:
    months = month_keys(figures)
    first, last = months[0], months[-1]
    found: dict[str, Figure] = {}

    def add(area: Area, cell: Cell) -> None:
        key = area.key
        found[key] = Figure(
            area, cell.volunteers, cell.minutes, figures.largest.get(key, 0), figures.alone.get(key, "")
        )

    for key, row in zip(months, figures.months, strict=True):
        for p, cell in row.programmes.items():
            add(Area(key, key, p), cell)
        add(Area(key, key, ALL), row.total)
    for p, cell in figures.programmes.items():
        add(Area(first, last, p), cell)
    add(Area(first, last, ALL), figures.total)
    return found


def _count_rows(figures: Figures) -> dict[str, tuple[CountRow, dict[str, int]]]:
    """Each row's groups and printed counts: every month, and the period (where employees are printed)."""
    months = month_keys(figures)
    rows: dict[str, tuple[CountRow, dict[str, int]]] = {}
    for key, month in zip(months, figures.months, strict=True):
        sizes = {**{p: c.volunteers for p, c in month.programmes.items()}, ALL: month.total.volunteers}
        rows[f"{key}..{key}"] = (CountRow(f"{key}..{key}", _group_sets(month.groups, month.programmes)), sizes)
    span = f"{months[0]}..{months[-1]}"
    groups = _group_sets(figures.groups, figures.programmes)
    groups[frozenset()] = max(figures.employees - figures.total.volunteers, 0)
    sizes = {**{p: c.volunteers for p, c in figures.programmes.items()}, ALL: figures.total.volunteers}
    rows[span] = (CountRow(span, groups, employees_printed=True), sizes)
    return rows


def _group_sets(groups: dict[str, int], programmes) -> dict[frozenset, int]:
    found = {frozenset(key.split("+")): people for key, people in groups.items()}
    if not found and any(c.volunteers for c in programmes.values()):
        # A snapshot from before groups were kept: every group may be small.
        subsets = {frozenset([p]) for p in programmes} | {frozenset(programmes)}
        return dict.fromkeys(subsets, 1)
    return found


def choose_mask(figures: Figures, earlier: list[Release]) -> tuple[FilingMask, Release]:
    """The mask of a new filing output, and the record of what it releases."""
    programmes = list(figures.programmes)
    items = _figures_of(figures)
    unprinted = []
    for span, counts in figures.spans.items():
        for target in [*programmes, ALL]:
            area = Area(*span.split(".."), target)
            minutes = sum(
                (m.total if target == ALL else m.programmes[target]).minutes
                for m in figures.months
                if area.first <= m.start[:7] <= area.last
            )
            largest, alone = figures.largest.get(area.key, 0), figures.alone.get(area.key, "")
            unprinted.append(Figure(area, counts.get(target, 0), minutes, largest, alone))
    hidden = choose_hidden(list(items.values()), earlier, programmes, unprinted)
    released_counts = {key for release in earlier for key in release.counts_shown}
    counts_hidden: set[str] = set()
    counts_shown: list[str] = []
    for span, (row, sizes) in _count_rows(figures).items():
        first, last = span.split("..")
        printed = [t for t in [*programmes, ALL] if Area(first, last, t).key not in hidden]
        if row.employees_printed and Area(first, last, ALL).key not in hidden:
            printed.append(EMPLOYEES)
        before = [t for t in [*programmes, ALL] if Area(first, last, t).key in released_counts]
        if f"{EMPLOYEES}:{span}" in released_counts:
            before.append(EMPLOYEES)
        dropped = choose_counts_hidden(row, printed, before, sizes, programmes)
        for target in printed:
            key = f"{EMPLOYEES}:{span}" if target == EMPLOYEES else Area(first, last, target).key
            (counts_hidden.add if target in dropped else counts_shown.append)(key)
    release = released_by(list(items.values()), hidden, unprinted, counts_shown)
    return FilingMask(hidden, counts_hidden), release


_EARLIER = sa.text("""
    SELECT figures, mask, created_at FROM filing_releases
    WHERE company_id = :company_id AND NOT (period_start = :start AND period_end = :end)
    ORDER BY id
""")
_THIS = sa.text("""
    SELECT figures, mask, report_id, created_at FROM filing_releases
    WHERE company_id = :company_id AND period_start = :start AND period_end = :end
""")
# A filing by its report ID, with its company's name: the public verify page's one read.
_BY_ID = sa.text("""
    SELECT f.company_id, c.name AS company_name, f.period_start, f.period_end, f.figures, f.mask, f.report_id,
           f.created_at
    FROM filing_releases f JOIN companies c ON c.id = f.company_id WHERE f.report_id = :report_id
""")
# The records of one month received after a moment (new, changed or cancelled): late for a filing.
_LATE = sa.text("""
    SELECT a.volunteer_email FROM attendance_sessions a
    WHERE a.company_id = :company_id AND a.held_at >= :start AND a.held_at < :end AND a.received_at > :after
""")
_RECORD = sa.text("""
    INSERT INTO filing_releases (company_id, period_start, period_end, figures, mask, source, created_at, report_id)
    VALUES (:company_id, :start, :end, :figures, :mask, :source, :now, :report_id)
""")


def _as_months_were_filed(figures: Figures, earlier: list[Figures]) -> Figures:
    """The figures with every month an earlier filing printed as it printed it, and the period's
    hours and sessions summed from those rows: a quarter filed after its months must not differ
    from them by a late session (that difference would be one colleague's)."""
    filed: dict[str, MonthRow] = {}
    facts: dict[str, Figures] = {}
    for found in earlier:  # oldest first: the first filing of a month fixes it
        for month in found.months:
            if month.start[:7] not in filed:
                filed[month.start[:7]], facts[month.start[:7]] = month, found
    months = [filed.get(m.start[:7], m) for m in figures.months]
    if all(a is b for a, b in zip(months, figures.months, strict=True)):
        return figures
    # A month printed as filed keeps who was alone in it and who gave most of it, as filed.
    largest, alone = dict(figures.largest), dict(figures.alone)
    for key, found in facts.items():
        if key in {m.start[:7] for m in figures.months}:
            for target in [*figures.programmes, ALL]:
                area = Area(key, key, target).key
                largest[area] = found.largest.get(area, 0)
                alone.pop(area, None)
                if area in found.alone:
                    alone[area] = found.alone[area]
    # A longer area's largest colleague is not known as filed: bound it by the sum of its months'
    # largest (one colleague gives at most each month's largest), so dominance errs on hiding.
    keys = month_keys(figures)
    for span in [f"{keys[0]}..{keys[-1]}", *figures.spans]:
        first, last = span.split("..")
        for target in [*figures.programmes, ALL]:
            inside = [k for k in keys if first <= k <= last]
            largest[Area(first, last, target).key] = sum(largest.get(Area(k, k, target).key, 0) for k in inside)
    programmes = {
        p: Cell(
            sum(m.programmes[p].minutes for m in months),
            sum(m.programmes[p].sessions for m in months),
            cell.volunteers,
        )
        for p, cell in figures.programmes.items()
    }
    total = Cell(sum(m.total.minutes for m in months), sum(m.total.sessions for m in months), figures.total.volunteers)
    return Figures(
        total,
        figures.employees,
        programmes,
        months,
        [],
        figures.groups,
        figures.spans,
        largest,
        alone,
        figures.own_time_volunteers,
    )


def _accounted(rows) -> dict[str, dict]:
    """Per month, what the filings so far have accounted for: its minutes and sessions, and the
    moment they were read (a month's first filing, or the latest filing that stated its corrections)."""
    found: dict[str, dict] = {}
    for row in rows:  # oldest first
        stored = json.loads(row.mask)
        if "accounted" in stored:
            found.update(stored["accounted"])
            continue
        for month in Figures.from_dict(json.loads(row.figures)).months:  # recorded before corrections were kept
            found.setdefault(
                month.start[:7],
                {"minutes": month.total.minutes, "sessions": month.total.sessions, "at": row.created_at},
            )
    return found


def _corrections(
    conn: sa.Connection, *, company_id: int, live: Figures, accounted: dict[str, dict], tz: ZoneInfo, now: str
) -> tuple[FiledCorrections | None, dict[str, dict]]:
    """The corrections this filing states for the months earlier filings printed, and what every
    month of it is accounted for after it."""
    late: list[str] = []
    minutes = sessions = 0
    reprinted = []
    for month in live.months:
        key = month.start[:7]
        before = accounted.get(key)
        if before is None:
            continue
        reprinted.append(key)
        period = Period(date.fromisoformat(month.start), date.fromisoformat(month.end), key, "month")
        start, end = period.utc_bounds(tz)
        where = {"company_id": company_id, "start": start, "end": end, "after": before["at"]}
        late += conn.execute(_LATE, where).scalars().all()
        minutes += month.total.minutes - before["minutes"]
        sessions += month.total.sessions - before["sessions"]
    now_accounted = {
        m.start[:7]: {"minutes": m.total.minutes, "sessions": m.total.sessions, "at": now} for m in live.months
    }
    if not late and not minutes and not sessions:
        return None, {**now_accounted, **{k: accounted[k] for k in reprinted}}
    found = FiledCorrections(len(late), len(set(late)), minutes, sessions, len(set(late)) >= THRESHOLD)
    if found.shown:
        return found, now_accounted
    return found, {**now_accounted, **{k: accounted[k] for k in reprinted}}  # carried to the next filing


def file_on(
    conn: sa.Connection,
    *,
    company_id: int,
    period: Period,
    figures: Figures,
    source: str,
    tz: ZoneInfo,
    now: str,
    compare: bool = True,
) -> Filed:
    """File a period inside the caller's write: the first time with these figures and a new mask,
    afterwards as it was first filed. Months an earlier filing printed are printed as then, and what
    arrived for them since is stated as corrections (FiledCorrections), fixed with this filing.

    `compare`: the filing states its year's goal and the year before (goals.py): the same period a
    year earlier is filed first (without a comparison of its own: no chain back through the years),
    so this filing's mask treats last year's figures as released, and the comparison is stored."""
    where = {"company_id": company_id, "start": period.start.isoformat(), "end": period.end.isoformat()}
    found = conn.execute(_THIS, where).first()
    if found is not None:
        return _filed(found)
    before = (
        _file_year_before(conn, company_id=company_id, period=period, source=source, tz=tz, now=now)
        if compare
        else None
    )
    filed, stored = _new_filing(
        conn, company_id=company_id, period=period, figures=figures, tz=tz, now=now, compare=compare, before=before
    )
    filed.report_id = new_report_id(company_id, period)
    conn.execute(
        _RECORD,
        {
            **where,
            "figures": json.dumps(filed.figures.to_dict()),
            "mask": json.dumps(stored),
            "source": source,
            "now": now,
            "report_id": filed.report_id,
        },
    )
    return filed


def filing_as_it_stands(
    conn: sa.Connection, *, company_id: int, period: Period, figures: Figures, tz: ZoneInfo, now: str
) -> Filed:
    """The period's filing if it was filed, else what filing it now would state (its figures and its
    mask, without a report ID or a comparison with the year before, which would file that year):
    writes nothing. TEEI's read-only view of a company's report shows this, so it hides exactly what
    the company's filing hides."""
    found = filing_of(conn, company_id=company_id, period=period)
    if found is not None:
        return found
    return _new_filing(conn, company_id=company_id, period=period, figures=figures, tz=tz, now=now, compare=False)[0]


def _new_filing(
    conn: sa.Connection,
    *,
    company_id: int,
    period: Period,
    figures: Figures,
    tz: ZoneInfo,
    now: str,
    compare: bool,
    before: YearBefore | None = None,
) -> tuple[Filed, dict]:
    """A first filing of the period, read and decided but not recorded: (it, what its record stores)."""
    where = {"company_id": company_id, "start": period.start.isoformat(), "end": period.end.isoformat()}
    rows = conn.execute(_EARLIER, where).all()
    earlier = [Release.from_dict(json.loads(row.mask)["release"]) for row in rows]
    unnamed = _as_months_were_filed(
        Figures(
            figures.total,
            figures.employees,
            figures.programmes,
            figures.months,
            [],
            figures.groups,
            figures.spans,
            figures.largest,
            figures.alone,
            figures.own_time_volunteers,
        ),
        [Figures.from_dict(json.loads(row.figures)) for row in rows],
    )
    corrections, accounted = _corrections(
        conn, company_id=company_id, live=figures, accounted=_accounted(rows), tz=tz, now=now
    )
    mask, release = choose_mask(unnamed, earlier)
    comparison = (
        _comparison(
            conn, company_id=company_id, period=period, figures=unnamed, mask=mask, rows=rows, before=before, tz=tz
        )
        if compare
        else None
    )
    stored = {
        "mask": mask.to_dict(),
        "release": release.to_dict(),
        "accounted": accounted,
        "corrections": None if corrections is None else corrections.to_dict(),
        "comparison": None if comparison is None else comparison.to_dict(),
    }
    return Filed(unnamed, mask, corrections, "", now, comparison), stored


def _filed(row) -> Filed:
    stored = json.loads(row.mask)
    return Filed(
        Figures.from_dict(json.loads(row.figures)),
        FilingMask.from_dict(stored["mask"]),
        FiledCorrections.from_dict(stored.get("corrections")),
        row.report_id,
        row.created_at,
        Comparison.from_dict(stored.get("comparison")),
    )


_ANY_COUNTED = sa.text(f"""
    SELECT EXISTS (SELECT 1 FROM attendance_sessions a WHERE {counted_scope(programmes=False)})
""")


def _file_year_before(
    conn: sa.Connection, *, company_id: int, period: Period, source: str, tz: ZoneInfo, now: str
) -> YearBefore:
    """The same period a year earlier as its filing shows it: filed now (as any filing, jointly with
    everything released) unless it was filed before. A year before without any session is not filed:
    its figures are zero, and a zero describes nobody."""
    earlier = year_before(period)
    filed = filing_of(conn, company_id=company_id, period=earlier)
    if filed is None:
        start, end = earlier.utc_bounds(tz)
        if not conn.execute(_ANY_COUNTED, {"company_id": company_id, "start": start, "end": end}).scalar():
            return YearBefore.zero(earlier)
        live = read_figures(
            conn, company_id=company_id, query=ReportQuery(earlier, "all"), tz=tz, listed=False, facts=True
        )
        filed = file_on(
            conn, company_id=company_id, period=earlier, figures=live, source=source, tz=tz, now=now, compare=False
        )
    mask = filed.mask
    first, last = filed.figures.months[0].start[:7], filed.figures.months[-1].start[:7]
    return YearBefore.of(
        earlier,
        filed.figures,
        total_hidden=mask.hides(first, last),
        count_hidden=mask.hides_count(first, last),
        participation_hidden=mask.hides_participation(first, last),
        report_id=filed.report_id,
    )


def _comparison(
    conn: sa.Connection,
    *,
    company_id: int,
    period: Period,
    figures: Figures,
    mask: FilingMask,
    rows,
    before: YearBefore | None,
    tz: ZoneInfo,
) -> Comparison:
    """What this filing compares with: its year's goal, with the hours measured as released (the
    period's own total, or the year to date summed from released month totals), and the year before."""
    settings = read_report_settings(conn, company_id=company_id)
    months = month_keys(figures)
    year = goal_year(period, settings.fiscal_year_start_month)
    if year is not None:
        goal = read_goal(conn, company_id=company_id, year=year)
        return Comparison(
            goal,
            figures.total.minutes,
            mask.hides(months[0], months[-1]),
            period.end.isoformat(),
            period.end < year.end,
            True,
            before,
        )
    year = fiscal_year_containing(period.start, settings.fiscal_year_start_month)
    if period.end > year.end:  # a calendar year across two fiscal years: no one year's goal
        return Comparison(before=before)
    goal = read_goal(conn, company_id=company_id, year=year)
    minutes, hidden = _year_to_date(
        conn, company_id=company_id, year=year, period=period, figures=figures, mask=mask, rows=rows, tz=tz
    )
    return Comparison(goal, minutes, hidden, period.end.isoformat(), True, False, before)


def _year_to_date(
    conn: sa.Connection, *, company_id: int, year: Period, period: Period, figures: Figures, mask: FilingMask, rows, tz
) -> tuple[int, bool]:
    """The year's hours through the period's end as filings released them: each month's total as first
    filed, shown only when a filing showed it (this one, or an earlier one); a month no filing printed
    counts only when it has no session at all. (minutes, hidden)."""
    this = {m.start[:7]: m for m in figures.months}
    filed: dict[str, int] = {}
    shown: set[str] = set()
    for row in rows:  # oldest first: a month's first filing fixes it
        release = json.loads(row.mask)["release"]
        shown.update(release["shown"])
        for month in Figures.from_dict(json.loads(row.figures)).months:
            filed.setdefault(month.start[:7], month.total.minutes)
    minutes, hidden = 0, False
    for month in Period(year.start, period.end, "").months():
        key = month.start.isoformat()[:7]
        area = Area(key, key, ALL).key
        if key in this:
            hidden |= area in mask.hidden
            minutes += this[key].total.minutes
        elif key in filed:
            hidden |= area not in shown
            minutes += filed[key]
        else:
            start, end = month.utc_bounds(tz)
            hidden |= bool(conn.execute(_ANY_COUNTED, {"company_id": company_id, "start": start, "end": end}).scalar())
    return minutes, hidden


def filing_of(conn: sa.Connection, *, company_id: int, period: Period) -> Filed | None:
    """The period's filing, if it was filed (read only: files nothing)."""
    where = {"company_id": company_id, "start": period.start.isoformat(), "end": period.end.isoformat()}
    found = conn.execute(_THIS, where).first()
    return None if found is None else _filed(found)


@dataclass
class FoundFiling:
    """A filing as the public verify page reads it."""

    company_id: int
    company_name: str
    period_start: date
    period_end: date
    filed: Filed


def find_filing(conn: sa.Connection, report_id: str) -> FoundFiling | None:
    """The filing with this report ID, or None."""
    row = conn.execute(_BY_ID, {"report_id": report_id}).first()
    if row is None:
        return None
    return FoundFiling(
        row.company_id,
        row.company_name,
        date.fromisoformat(row.period_start),
        date.fromisoformat(row.period_end),
        _filed(row),
    )
