"""Rank by elimination over fractions, written for the tests apart from the portal's own (Span), so
a check that no hidden figure follows from the shown ones does not trust the code it checks."""

from __future__ import annotations

from fractions import Fraction


def rank(rows: list[list[int]]) -> int:
    matrix = [[Fraction(v) for v in row] for row in rows]
    found = 0
    for column in range(len(matrix[0]) if matrix else 0):
        pivot = next((r for r in range(found, len(matrix)) if matrix[r][column]), None)
        if pivot is None:
            continue
        matrix[found], matrix[pivot] = matrix[pivot], matrix[found]
        for r in range(len(matrix)):
            if r != found and matrix[r][column]:
                factor = matrix[r][column] / matrix[found][column]
                matrix[r] = [a - factor * b for a, b in zip(matrix[r], matrix[found], strict=True)]
        found += 1
    return found
