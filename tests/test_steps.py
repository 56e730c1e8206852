"""A write's steps are named, and their results found by name after a real write (Database.write_steps)."""

import pytest

from portal.core.driver import Statement, Steps

INSERT = Statement("INSERT INTO login_failures (address_hash, failures, window_started_at) VALUES (:key, 1, :now)")
COUNT = Statement("SELECT COUNT(*) FROM login_failures")
CLEAR = Statement("DELETE FROM login_failures WHERE address_hash = :key")


def test_each_named_step_hands_back_its_own_result_whatever_stands_before_it(db):
    before = Steps().add("cleared", CLEAR, {"key": "b"})
    steps = Steps().extend([(CLEAR, {"key": "a"})]).extend(before)
    steps.add("inserted", INSERT, {"key": "b", "now": "2026-01-01"}).extend([(CLEAR, {"key": "c"})])
    written = db.write_steps(steps.add("counted", COUNT, {}))
    assert written["cleared"].rowcount == 0 and written["inserted"].rowcount == 1
    assert written["counted"].scalar() == 1
    assert "inserted" in written and "missing" not in written


def test_a_name_is_taken_once_in_a_write():
    steps = Steps().add("sealed", COUNT, {})
    with pytest.raises(ValueError, match="sealed"):
        steps.add("sealed", COUNT, {})
    with pytest.raises(ValueError, match="sealed"):
        Steps().add("sealed", COUNT, {}).extend(Steps().add("sealed", COUNT, {}))
