"""Which figures a filing output hides, decided jointly with everything the company filed before.

Hours and sessions add up. Every figure a filing PDF prints is a sum over a rectangle of base
cells (month x programme): a cell, a month's total, a programme's total over the period, the
period's total. A figure about 1 to 4 volunteers is hidden (primary). Then the exact check: with
every figure released so far (earlier PDFs and report emails of the company, `filing_releases`)
and every figure this output would show as known, Gaussian elimination over fractions decides
whether a hidden figure is a linear combination of known ones; while one is, one more figure of
this output is hidden (secondary), preferring one that breaks that combination. A hidden group of
exactly one is known to its member: each colleague is one attacker across every group where they are
alone, in this output and in every earlier release (a release keeps an opaque key of the colleague
of each hidden group of one), knowing every base cell inside those groups at once. An hours figure
where one colleague gave 80% or more of the hours (dominance, the (1, 80) rule) is protected as a
group of 1 to 4 is.

Counts of volunteers do not add across months (a colleague active in two months is one volunteer
of the quarter), so they are checked within one row (a month, or the whole period): there the
programme counts, the total and the employees are sums of disjoint groups (only in Language, in
both, ..., employees who did not volunteer). A group of 1 to 4 that the shown counts determine is
hidden by hiding one more count.

Pure functions over plain values: no database, no PDF.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import combinations

THRESHOLD = 5
DOMINANCE = 80  # percent of a figure's hours one colleague may give before the figure is hidden
ALL = "all"
EMPLOYEES = "employees"


def is_small(volunteers: int) -> bool:
    return 0 < volunteers < THRESHOLD


def is_dominated(minutes: int, largest: int) -> bool:
    """The (1, 80) rule: one colleague gave 80% or more of the figure's hours."""
    return minutes > 0 and 100 * largest >= DOMINANCE * minutes


@dataclass(frozen=True)
class Area:
    """A rectangle of base cells: months first..last (YYYY-MM), one programme or all of them."""

    first: str
    last: str
    programme: str

    @property
    def key(self) -> str:
        return f"{self.first}..{self.last}:{self.programme}"

    @classmethod
    def parse(cls, key: str) -> Area:
        span, programme = key.split(":")
        first, last = span.split("..")
        return cls(first, last, programme)

    def months(self) -> list[str]:
        return months_between(self.first, self.last)

    @property
    def span(self) -> str:
        return f"{self.first}..{self.last}"


def _within(inner: Area, outer: Area) -> bool:
    return (
        outer.first <= inner.first
        and inner.last <= outer.last
        and (outer.programme == ALL or outer.programme == inner.programme)
    )


def _nested(one: Area, other: Area) -> bool:
    return _within(one, other) or _within(other, one)


def months_between(first: str, last: str) -> list[str]:
    year, month = int(first[:4]), int(first[5:7])
    found = []
    while f"{year:04d}-{month:02d}" <= last:
        found.append(f"{year:04d}-{month:02d}")
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return found


@dataclass(frozen=True)
class Figure:
    """One printed group: its area, how many volunteers it describes, its hours, the largest one
    colleague's share of them (dominance) and, for a group of one, the opaque key of that colleague."""

    area: Area
    volunteers: int
    minutes: int = 0
    largest: int = 0
    contributor: str = ""

    @property
    def inner(self) -> bool:
        return self.area.programme != ALL and self.area.first == self.area.last

    @property
    def sensitive(self) -> bool:
        """A figure to protect: a group of 1 to 4, or one colleague's hours to 80% or more."""
        return is_small(self.volunteers) or is_dominated(self.minutes, self.largest)


@dataclass
class Release:
    """What one filing output printed: the figures shown, those hidden (with their group sizes then),
    and the volunteer counts shown (area keys, and `employees:<span>` for a participation base).

    `hidden` also holds the small groups of the quarters inside the output that it protected
    without printing them (`released_by`): every later output goes on protecting them until their
    own filing, or a later month filing could give one away to a colleague alone in another group.
    `alone`: the opaque key of the colleague of each hidden group of one, so a later output checks
    that colleague with everything they know at once. `dominated`: hidden figures protected for
    dominance (their groups are 5 or more).
    """

    shown: list[str] = field(default_factory=list)
    hidden: dict[str, int] = field(default_factory=dict)
    counts_shown: list[str] = field(default_factory=list)
    alone: dict[str, str] = field(default_factory=dict)
    dominated: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "shown": self.shown,
            "hidden": self.hidden,
            "counts_shown": self.counts_shown,
            "alone": self.alone,
            "dominated": self.dominated,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Release:
        # A release recorded before colleagues' keys and dominance were kept has neither.
        return cls(
            list(data["shown"]),
            dict(data["hidden"]),
            list(data["counts_shown"]),
            dict(data.get("alone", {})),
            list(data.get("dominated", [])),
        )


def released_by(
    figures: Sequence[Figure], hidden: set[str], unprinted: Sequence[Figure] = (), counts_shown: Iterable[str] = ()
) -> Release:
    """The record of one output: what it showed, hid and protected (see Release)."""
    protected = [f for f in unprinted if f.sensitive]
    kept = protected + [f for f in sorted(figures, key=lambda f: f.area.key) if f.area.key in hidden]
    return Release(
        shown=sorted(f.area.key for f in figures if f.area.key not in hidden),
        hidden={f.area.key: f.volunteers for f in kept},
        counts_shown=sorted(set(counts_shown)),
        alone={f.area.key: f.contributor for f in kept if f.volunteers == 1 and f.contributor},
        dominated=sorted({f.area.key for f in kept if f.sensitive and not is_small(f.volunteers)}),
    )


class Span:
    """The linear span of vectors over the rationals, kept in echelon form (vectors are dicts)."""

    def __init__(self, vectors: Iterable[dict] = ()):
        self.rows: list[tuple[object, dict]] = []
        for vector in vectors:
            self.add(vector)

    def _reduce(self, vector: dict) -> dict:
        rest = {k: Fraction(v) for k, v in vector.items() if v}
        for pivot, row in self.rows:
            factor = rest.get(pivot)
            if factor:
                for k, v in row.items():
                    value = rest.get(k, 0) - factor * v
                    if value:
                        rest[k] = value
                    else:
                        rest.pop(k, None)
        return rest

    def add(self, vector: dict) -> None:
        rest = self._reduce(vector)
        if rest:
            pivot = next(iter(rest))
            scale = rest[pivot]
            self.rows.append((pivot, {k: v / scale for k, v in rest.items()}))

    def contains(self, vector: dict) -> bool:
        return not self._reduce(vector)

    def copy(self) -> Span:
        found = Span()
        found.rows = list(self.rows)  # rows are never changed once added
        return found


class Grid:
    """Turns areas into vectors over (month, programme) base cells."""

    def __init__(self, programmes: Sequence[str]):
        self.programmes = tuple(programmes)

    def vector(self, area: Area) -> dict:
        chosen = self.programmes if area.programme == ALL else (area.programme,)
        return {(month, p): 1 for month in area.months() for p in chosen}


@dataclass
class Mask:
    """What one output hides: whole figures (hours, sessions and volunteers) and volunteer counts only."""

    hidden: set[str]
    counts_hidden: set[str]

    def hides(self, area: Area) -> bool:
        return area.key in self.hidden

    def hides_count(self, area: Area) -> bool:
        return area.key in self.hidden or area.key in self.counts_hidden


def choose_hidden(
    figures: Sequence[Figure],
    earlier: Sequence[Release],
    programmes: Sequence[str],
    unprinted: Sequence[Figure] = (),
) -> set[str]:
    """The figures of one output to hide so that, with everything released before, no figure to
    protect (a group of 1 to 4, or one colleague's 80%) is determined by what is known: in this
    output, hidden by an earlier one, or `unprinted` (a quarter inside a year: another filing prints
    it, and must be able to hide it). Known to whom: a reader, and each colleague alone in a hidden
    group, who knows every base cell of every group where they are alone, here and in every release."""
    grid = Grid(programmes)
    by_key = {f.area.key: f for f in figures}
    released = {key for release in earlier for key in release.shown}
    hidden = {key for key, f in by_key.items() if f.sensitive}
    # What to protect, with its group size, and who is alone in it (a colleague's opaque key).
    targets: dict[str, int] = {}
    alone: dict[str, str] = {}
    for release in earlier:
        dominated = set(release.dominated)
        for key, n in release.hidden.items():
            if key not in released and (is_small(n) or key in dominated):
                targets[key] = n
        alone.update(release.alone)
    for f in [*unprinted, *figures]:
        if f.sensitive and f.area.key not in released:
            targets[f.area.key] = f.volunteers
            if f.volunteers == 1 and f.contributor:
                alone[f.area.key] = f.contributor
    # A group of one without a key (recorded before keys were kept) is a colleague of its own.
    who = {key: alone.get(key, f"area:{key}") for key, n in targets.items() if n == 1}
    knows: dict[str, list[str]] = {}
    for key, person in sorted(who.items()):
        knows.setdefault(person, []).append(key)
    released_span = Span(grid.vector(Area.parse(key)) for key in sorted(released))
    # Each colleague's own knowledge: every base cell inside a group where they are alone (it is
    # theirs, or nobody's), all at once.
    attackers: dict[str | None, Span] = {None: released_span}
    for person, keys in sorted(knows.items()):
        span = released_span.copy()
        for key in keys:
            for cell in grid.vector(Area.parse(key)):
                span.add({cell: 1})
        attackers[person] = span

    def unknown_to(target: str, person: str | None) -> bool:
        """False when `person` knows the target anyway: it is their own group of one (or, for groups
        without keys, a group of one nested in theirs: the same colleague)."""
        if person is None or targets[target] != 1:
            return True
        if who[target] == person:
            return False
        legacy = person.startswith("area:") or who[target].startswith("area:")
        return not (legacy and any(_nested(Area.parse(k), Area.parse(target)) for k in knows[person]))

    pairs = [(target, person) for person in attackers for target in sorted(targets) if unknown_to(target, person)]

    def first_exposed(pairs: list[tuple[str, str | None]], hiding: set[str]) -> tuple[str, str | None] | None:
        shown = [grid.vector(Area.parse(key)) for key in by_key if key not in hiding]
        spans: dict[str | None, Span] = {}
        for target, person in pairs:
            if person not in spans:
                spans[person] = attackers[person].copy()
                for vector in shown:
                    spans[person].add(vector)
            if spans[person].contains(grid.vector(Area.parse(target))):
                return target, person
        return None

    # What earlier outputs already gave to someone, this one cannot take back from them.
    checked = [pair for pair in pairs if first_exposed([pair], set(by_key)) is None]
    primary = set(hidden)
    while True:
        found = first_exposed(checked, hidden)
        if found is None:
            break
        candidates = sorted(
            (f for key, f in by_key.items() if key not in hidden and key not in released),
            key=lambda f: (f.volunteers == 0, not f.inner, f.volunteers, f.minutes, f.area.key),
        )
        if not candidates:
            break  # nothing of this output left to hide; what was released decides
        breaking = next((f for f in candidates if first_exposed([found], hidden | {f.area.key}) is None), candidates[0])
        hidden.add(breaking.area.key)
    # The greedy choice can hide more than it needs: show again, totals and large groups first, every
    # extra figure whose return exposes nothing.
    for key in sorted(hidden - primary, key=lambda k: (by_key[k].inner, -by_key[k].volunteers, k)):
        if first_exposed(checked, hidden - {key}) is None:
            hidden.discard(key)
    return hidden


@dataclass(frozen=True)
class CountRow:
    """One row's volunteer counts: the disjoint groups by the set of programmes they attended."""

    span: str
    groups: dict[frozenset, int]  # frozenset of programmes -> people; frozenset() -> employees who did not
    employees_printed: bool = False


def count_functional(target: str, programmes: Sequence[str]) -> dict:
    """Which groups a printed count adds up: a programme, all volunteers, or all employees."""
    subsets = [frozenset(c) for n in range(1, len(programmes) + 1) for c in combinations(programmes, n)]
    if target == EMPLOYEES:
        return {s: 1 for s in subsets + [frozenset()]}
    if target == ALL:
        return {s: 1 for s in subsets}
    return {s: 1 for s in subsets if target in s}


def choose_counts_hidden(
    row: CountRow, shown: Sequence[str], released: Iterable[str], volunteers: dict[str, int], programmes: Sequence[str]
) -> set[str]:
    """Counts of one row to hide (programme keys, ALL or EMPLOYEES) so no group of 1 to 4 is determined.

    `shown`: counts this output would print in the row; `released`: those an earlier output printed."""
    released = set(released)
    hidden: set[str] = set()
    small = [group for group, people in row.groups.items() if is_small(people)]
    while True:
        known = Span(count_functional(t, programmes) for t in released | (set(shown) - hidden))
        exposed = [g for g in small if known.contains({g: 1})]
        if not exposed:
            return hidden
        order = {ALL: 2, EMPLOYEES: 1}  # the volunteers' total is the figure people look for
        candidates = sorted(
            (t for t in shown if t not in hidden and t not in released),
            key=lambda t: (order.get(t, 0), volunteers.get(t, 0)),
        )
        if not candidates:
            return hidden
        hidden.add(candidates[0])
