"""Small-cell suppression: groups under 5 hidden, and no hidden cell recoverable from the totals."""

from __future__ import annotations

import random

from portal.reports.masking import suppress_list, suppress_table


def lines_of(cells, rows_hidden, cols_hidden, grand_hidden, hidden):
    """Every additive relation of the table: (entries' hidden flags) per row and per column, with its total."""
    rows = [[*hidden[r], rows_hidden[r]] for r in range(len(cells))]
    cols = [[*(hidden[r][c] for r in range(len(cells))), cols_hidden[c]] for c in range(len(cells[0]))]
    return rows + cols + [[*cols_hidden, grand_hidden], [*rows_hidden, grand_hidden]]


def test_nothing_hidden_when_every_group_is_large():
    hidden, rows, cols, grand = suppress_table([[5, 9], [12, 7]], [14, 19], [17, 16], 33)
    assert hidden == [[False, False], [False, False]] and not any(rows) and not any(cols) and not grand


def test_zero_is_shown_and_small_groups_are_hidden():
    hidden, _, _, _ = suppress_table([[0, 9, 3], [12, 7, 8]], [12, 19, 11], [12, 16, 11], 42)
    assert hidden[0][0] is False  # an empty group reveals nobody
    assert hidden[0][2] is True


def test_one_hidden_cell_in_a_row_hides_the_next_smallest_too():
    # Row 0: 3 is hidden; without a second hidden cell, 3 = 20 - 9 - 8.
    hidden, rows, cols, grand = suppress_table([[3, 9, 8], [12, 7, 20]], [20, 39], [15, 16, 28], 59)
    assert hidden[0] == [True, False, True]  # 8 is the next-smallest in the row
    # ...and each column that now hides one cell hides another (its next-smallest).
    assert hidden[1][0] and hidden[1][2]
    assert not rows[0] and not grand


def test_a_hidden_total_is_not_left_alone_either():
    # Row 1 has 4 volunteers in all: the total itself is hidden, so its cells and a partner are too.
    hidden, rows, cols, grand = suppress_table([[10, 9], [3, 1]], [19, 4], [13, 10], 23)
    assert rows[1] and hidden[1] == [True, True]


def test_single_list_with_its_total():
    assert suppress_list([3, 40], 43) == ([True, True], False)
    assert suppress_list([30, 40], 70) == ([False, False], False)
    assert suppress_list([3, 0], 3) == ([True, False], True)


def test_random_tables_never_leave_exactly_one_hidden_entry_in_a_line():
    rng = random.Random(3)
    for _ in range(300):
        cells = [
            [rng.choice([0, 1, 2, 3, 4, 5, 6, 9, 15, 40]) for _ in range(rng.randint(1, 3))]
            for _ in range(rng.randint(1, 12))
        ]
        cells = [row[: len(cells[0])] + [0] * (len(cells[0]) - len(row)) for row in cells]
        row_totals = [sum(row) for row in cells]
        col_totals = [sum(col) for col in zip(*cells, strict=True)]
        hidden, rows, cols, grand = suppress_table(cells, row_totals, col_totals, sum(row_totals))
        for r, row in enumerate(cells):
            for c, value in enumerate(row):
                if 0 < value < 5:
                    assert hidden[r][c]
        for line in lines_of(cells, rows, cols, grand, hidden):
            assert sum(line) != 1, (cells, hidden, rows, cols, grand)
