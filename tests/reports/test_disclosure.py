"""The joint mask over random linked tables: months, quarters and the year of two or three
programmes, filed in a random order. Whatever was released, no hidden group of 1 to 4 volunteers is
determined by everything shown, to a reader or to any one colleague alone in a hidden group."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from portal.reports.disclosure import (
    ALL,
    Area,
    CountRow,
    Figure,
    Release,
    choose_counts_hidden,
    choose_hidden,
    released_by,
)
from tests.reports.linear import rank

MONTHS = [f"2025-{m:02d}" for m in range(1, 13)]
PERIODS = [(m, m) for m in MONTHS] + [(MONTHS[q * 3], MONTHS[q * 3 + 2]) for q in range(4)] + [(MONTHS[0], MONTHS[-1])]


def base_cells(programmes) -> list[tuple[str, str]]:  # in the order of `vector`
    return [(m, p) for m in MONTHS for p in programmes]


def vector(area: Area, programmes) -> list[int]:
    return [int(area.first <= m <= area.last and area.programme in (ALL, p)) for m in MONTHS for p in programmes]


def output(first, last, cells, programmes) -> list[Figure]:
    months = [m for m in MONTHS if first <= m <= last]
    found = {}
    for m in months:
        for p in programmes:
            found[(m, m, p)] = cells[(m, p)]
        found[(m, m, ALL)] = sum(cells[(m, p)] for p in programmes)
    for p in programmes:
        found[(first, last, p)] = sum(cells[(m, p)] for m in months)
    found[(first, last, ALL)] = sum(cells[(m, p)] for m in months for p in programmes)
    return [Figure(Area(*key), people, people * 60) for key, people in found.items()]


@st.composite
def linked_tables(draw):
    programmes = ("language", "mentorship", "third")[: draw(st.integers(2, 3))]
    people = st.sampled_from([0, 0, 1, 1, 2, 3, 4, 5, 6, 9])
    cells = {(m, p): draw(people) for m in MONTHS for p in programmes}
    order = draw(st.permutations(PERIODS))
    return programmes, cells, order[: draw(st.integers(1, len(order)))]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(linked_tables())
def test_no_hidden_group_is_determined_by_everything_released(case):
    programmes, cells, order = case
    releases: list[Release] = []
    hidden_groups: dict[Area, int] = {}
    for first, last in order:
        figures = output(first, last, cells, programmes)
        quarters = [
            f
            for start, end in PERIODS
            if first <= start and end <= last and (start, end) != (first, last) and start != end
            for f in output(start, end, cells, programmes)
            if f.area.first == start and f.area.last == end
        ]
        hidden = choose_hidden(figures, releases, programmes, quarters)
        releases.append(released_by(figures, hidden, quarters))
        hidden_groups.update({f.area: f.volunteers for f in figures if f.area.key in hidden})
    shown = [vector(Area.parse(key), programmes) for release in releases for key in release.shown]
    base = rank(shown) if shown else 0
    for area, people in hidden_groups.items():
        if not 0 < people < 5 or any(area.key in r.shown for r in releases):
            continue
        target = vector(area, programmes)
        assert rank(shown + [target]) > base, f"{area.key} ({people}) follows from what was shown"
        for alone, one in hidden_groups.items():
            if one != 1 or alone == area:
                continue
            nested = all(a <= b for a, b in zip(vector(alone, programmes), target, strict=True)) or all(
                a >= b for a, b in zip(vector(alone, programmes), target, strict=True)
            )
            if people == 1 and nested:
                continue  # the same colleague
            own = shown + [vector(alone, programmes)]
            assert rank(own + [target]) > rank(own), f"{area.key} ({people}) follows for the one in {alone.key}"


def test_a_colleague_in_both_programmes_is_not_given_away_by_the_counts():
    # 7 in Language and 7 in Mentorship with 13 in all: exactly one is in both.
    both = CountRow(
        "2025-05..2025-05",
        {frozenset({"language"}): 6, frozenset({"mentorship"}): 6, frozenset({"language", "mentorship"}): 1},
    )
    sizes = {"language": 7, "mentorship": 7, ALL: 13}
    hidden = choose_counts_hidden(both, ["language", "mentorship", ALL], [], sizes, ["language", "mentorship"])
    assert len(hidden) == 1 and hidden < {"language", "mentorship"}
    # Counts of 5, 5 and 10: nobody in both, nothing to hide.
    apart = CountRow("2025-05..2025-05", {frozenset({"language"}): 5, frozenset({"mentorship"}): 5})
    assert choose_counts_hidden(apart, ["language", "mentorship", ALL], [], {}, ["language", "mentorship"]) == set()


def test_a_colleague_alone_in_two_hidden_groups_is_one_attacker_with_both():
    """Issue 46.6: X is alone in January's Mentorship and in March's Language, Y in February's
    Mentorship. Q1 Mentorship − January (X's own) − (March − X's own March Language) is Y's February,
    unless X is checked with both of their groups at once."""
    months, programmes = MONTHS[:3], ("language", "mentorship")
    cells = {(m, p): 6 for m in months for p in programmes}
    who = {("2025-01", "mentorship"): "x", ("2025-02", "mentorship"): "y", ("2025-03", "language"): "x"}
    cells.update(dict.fromkeys(who, 1))
    cells[("2025-02", "language")] = 6
    cells[("2025-03", "mentorship")] = 6
    figures = [
        Figure(f.area, f.volunteers, f.minutes, 0, who.get((f.area.first, f.area.programme), ""))
        if f.area.first == f.area.last
        else f
        for f in output(
            months[0], months[-1], {**cells, **{(m, p): 0 for m in MONTHS[3:] for p in programmes}}, programmes
        )
    ]
    hidden = choose_hidden(figures, [], programmes)
    shown = [vector(f.area, programmes) for f in figures if f.area.key not in hidden]
    for (month, programme), person in who.items():
        target = vector(Area(month, month, programme), programmes)
        for attacker in {"x", "y"} - {person}:
            own = shown + [vector(Area(m, m, p), programmes) for (m, p), w in who.items() if w == attacker]
            assert rank(own + [target]) > rank(own), f"{month} {programme} follows for {attacker}"


@st.composite
def tables_with_colleagues(draw):
    programmes, cells, order = draw(linked_tables())
    who = {cell: draw(st.sampled_from("abc")) for cell, people in cells.items() if people == 1}
    return programmes, cells, order, who


def with_colleagues(figures: list[Figure], cells, who, programmes) -> list[Figure]:
    """A group of one is the colleague of its one base cell of one (the others inside it are empty)."""
    found = []
    for f in figures:
        inside = [
            (m, p)
            for m in MONTHS
            for p in programmes
            if vector(f.area, programmes)[MONTHS.index(m) * len(programmes) + programmes.index(p)]
        ]
        lone = [cell for cell in inside if cells[cell] == 1]
        found.append(Figure(f.area, f.volunteers, f.minutes, 0, who[lone[0]] if f.volunteers == 1 else ""))
    return found


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables_with_colleagues())
def test_no_colleague_works_out_a_hidden_group_with_all_they_know_of_themselves(case):
    """Issue 46.6: each colleague knows every base cell of every group where they are alone, across
    every release, at once; with everything released, no hidden group of 1 to 4 follows for them."""
    programmes, cells, order, who = case
    releases: list[Release] = []
    hidden_groups: dict[Area, Figure] = {}
    for first, last in order:
        figures = with_colleagues(output(first, last, cells, programmes), cells, who, programmes)
        quarters = [
            f
            for start, end in PERIODS
            if first <= start and end <= last and (start, end) != (first, last) and start != end
            for f in with_colleagues(output(start, end, cells, programmes), cells, who, programmes)
            if f.area.first == start and f.area.last == end
        ]
        hidden = choose_hidden(figures, releases, programmes, quarters)
        releases.append(released_by(figures, hidden, quarters))
        hidden_groups.update({f.area: f for f in figures + quarters if f.area.key in hidden or f in quarters})
    shown = [vector(Area.parse(key), programmes) for release in releases for key in release.shown]
    for person in "abc":
        own_areas = [f.area for f in hidden_groups.values() if f.contributor == person]
        cells_known = [
            [int(i == j) for j in range(len(MONTHS) * len(programmes))]
            for area in own_areas
            for i, v in enumerate(vector(area, programmes))
            if v
        ]
        own = shown + cells_known
        for area, f in hidden_groups.items():
            if not 0 < f.volunteers < 5 or f.contributor == person or any(area.key in r.shown for r in releases):
                continue
            target = vector(area, programmes)
            if cells_known and rank(cells_known + [target]) == rank(cells_known):
                continue  # the group is theirs alone (the generator counts them once per cell)
            occupied = [cell for i, cell in enumerate(base_cells(programmes)) if target[i] and cells[cell]]
            if occupied and all(cells[cell] == 1 and who[cell] == person for cell in occupied):
                continue  # every colleague in it is this one, counted once per cell: theirs alone too
            assert rank(own + [target]) > rank(own), f"{area.key} ({f.volunteers}) follows for {person}"
