"""Small-cell suppression for figures that leave the portal to be filed.

A cell describes a group of volunteers. A group smaller than the threshold is hidden (primary
suppression). Then, so no hidden cell can be recovered by subtracting the shown cells from a
total, every line (a row with its row total, a column with its column total) that hides exactly
one entry hides one more: its smallest shown entry, inner cells before totals (secondary
suppression), repeated until no line hides exactly one.

Pure functions over plain lists, so they are tested on their own.
"""

from __future__ import annotations

THRESHOLD = 5


def suppress_table(
    cells: list[list[int]],
    row_totals: list[int],
    column_totals: list[int],
    grand_total: int,
    threshold: int = THRESHOLD,
) -> tuple[list[list[bool]], list[bool], list[bool], bool]:
    """Which entries to hide in a table of group sizes with its margins.

    `cells[r][c]` is the number of volunteers in a cell; zeros are shown (an empty group reveals
    nobody). Returns masks shaped like the input: True means hidden.
    """
    rows, cols = len(cells), len(column_totals)
    # One grid with the margins: row `rows` holds column totals, column `cols` holds row totals.
    grid = [list(row) + [row_totals[r]] for r, row in enumerate(cells)] + [list(column_totals) + [grand_total]]
    hidden = [[0 < value < threshold for value in row] for row in grid]

    lines = [[(r, c) for c in range(cols + 1)] for r in range(rows + 1)]
    lines += [[(r, c) for r in range(rows + 1)] for c in range(cols + 1)]
    changed = True
    while changed:
        changed = False
        for line in lines:
            if sum(hidden[r][c] for r, c in line) != 1:
                continue
            shown = [(r, c) for r, c in line if not hidden[r][c]]
            if not shown:
                continue
            # Smallest shown group first; an inner cell before a total of the same size.
            r, c = min(
                shown, key=lambda rc: (grid[rc[0]][rc[1]] == 0, rc[0] == rows or rc[1] == cols, grid[rc[0]][rc[1]])
            )
            hidden[r][c] = True
            changed = True
    return (
        [row[:cols] for row in hidden[:rows]],
        [row[cols] for row in hidden[:rows]],
        hidden[rows][:cols],
        hidden[rows][cols],
    )


def suppress_list(groups: list[int], total: int, threshold: int = THRESHOLD) -> tuple[list[bool], bool]:
    """A single breakdown with its total (e.g. volunteers by programme): one line, same rules."""
    values = list(groups) + [total]
    hidden = [0 < value < threshold for value in values]
    while sum(hidden) == 1:
        shown = [i for i, value in enumerate(values) if not hidden[i]]
        if not shown:
            break
        hidden[min(shown, key=lambda i: (values[i] == 0, i == len(groups), values[i]))] = True
    return hidden[:-1], hidden[-1]
