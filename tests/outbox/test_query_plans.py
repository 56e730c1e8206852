"""The engine's per-email statements reach their rows through an index: their cost is the size of
the row or the batch, not of the outbox. A migration whose index is silently missing, or a statement
the planner cannot match to one, shows here as a SCAN (0021's batch index once was never made, and a
100,000-recipient campaign drained at 1.5 batches a second instead of 5)."""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest
import sqlalchemy as sa

import portal.outbox
from portal.core.driver import Statement

# Every module of the engine, found rather than listed: splitting send/batch.py once took three
# statements out of a hand-written list, and nothing said so.
MODULES = tuple(
    importlib.import_module(found.name)
    for found in pkgutil.walk_packages(portal.outbox.__path__, prefix=f"{portal.outbox.__name__}.")
)

# Reports over a whole table, by purpose: each reads every row it counts, and runs when an operator
# or a scrape asks, or once per purge, never once per email.
READS_A_WHOLE_TABLE = {
    "gauges._RECENT": "the /metrics scrape's accepted and receipted counts per family",
    "reads.ROWS_BY_FAMILY_AND_STATUS": "flask outbox status and the /metrics gauges",
    "retention._DELETE_UNUSED_SHARED": "the purge, over shared inputs (one per campaign)",
    "retention._KEPT": "the purge's report of what it keeps",
    # Over the receipts whose fields are still kept (RECEIPT_RETENTION_DAYS), once per person asked about.
    "personal_data._RECEIPTS_OF": "the privacy page: receipts whose kept fields still name the address",
    "personal_data._FORGET_RECEIPTS_NAMING": "an erasure: the same receipts' kept fields",
    # Suppression lists: once a day, or when an admin opens the reconciliation page.
    "suppression_comparison._PORTAL_LIST": "the daily comparison: the portal's whole list, against Resend's",
    "suppression_comparison._DIFFERENCES_BEFORE": "the daily comparison: the last pass's differences",
    "suppression_comparison._COUNT_DIFFERENCES": "the reconciliation page: how many differences are left",
    "suppression_comparison._SHOWN_DIFFERENCES": "the reconciliation page: the newest differences, by an index",
    # The newest pass, walked from the end of its index: one row.
    "suppression_comparison._LAST_PASS": "the reconciliation page and the worker's hourly check",
    "suppression_comparison._LAST_COMPLETE": "the reconciliation page and the worker's hourly check",
    # A row per operator's pause or resume: a few a year.
    "pause._HELD": "the relay's pass and a resume: which pauses hold, as recorded",
}
PARAMETER = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


def statements() -> dict[str, str]:
    """Every statement the modules build once, by module.NAME, with ? for its parameters."""
    found = {}
    for module in MODULES:
        for name, value in vars(module).items():
            label = f"{module.__name__.rsplit('.', 1)[-1]}.{name}"
            if isinstance(value, Statement):
                found[label] = value.sql
            elif isinstance(value, sa.TextClause):
                found[label] = PARAMETER.sub("?", value.text)
    return found


STATEMENTS = statements()


def test_every_whole_table_report_names_a_statement_of_the_engine():
    assert set(READS_A_WHOLE_TABLE) <= set(STATEMENTS)


@pytest.mark.parametrize("name", sorted(set(STATEMENTS) - set(READS_A_WHOLE_TABLE)))
def test_no_engine_statement_scans_a_table(db, name):
    sql = STATEMENTS[name]
    with db.read() as conn:
        plan = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}", tuple("x" for _ in range(sql.count("?")))).all()
    # A list bound as one parameter is walked as json_each, a virtual table (under its alias if it has
    # one); a window or a union is walked as its own materialised subquery, after its rows were found.
    scans = [
        step[3]
        for step in plan
        if step[3].startswith("SCAN") and not re.search(r"json_each|VIRTUAL TABLE|CONSTANT|\(subquery-\d+\)", step[3])
    ]
    assert not scans, f"{name}: {scans}"


# Statements that name their rows (a JSON list) reach them through that list, whatever else they ask.
# Asked for both, SQLite's planner takes a status index over the list and visits every waiting row:
# a publication during a 100,000-row backlog read the whole backlog (statuses.among_named).
# The resume's statements name families, not rows: they walk the parked rows by status on purpose
# (the `retry` rows, once per resume).
BY_STATUS_ON_PURPOSE = {"rows.PARKED_FREE", "rows.UNPARK"}
NAMED_ROWS = {
    name: sql
    for name, sql in STATEMENTS.items()
    if "json_each" in sql and "email_outbox" in sql and name not in BY_STATUS_ON_PURPOSE
}


def walks_the_outbox_by_status(db, sql: str) -> list[str]:
    with db.read() as conn:
        plan = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {PARAMETER.sub('NULL', sql.replace('?', 'NULL'))}").all()
    return [step[3] for step in plan if re.search(r"\b(SEARCH|SCAN) (email_outbox|o)\b.*\(status", step[3])]


@pytest.mark.parametrize("name", sorted(NAMED_ROWS))
def test_a_statement_naming_its_rows_never_walks_the_outbox_by_status(db, name):
    assert walks_the_outbox_by_status(db, NAMED_ROWS[name]) == [], name


def test_the_engine_has_statements_that_name_their_rows():
    assert {"rows._RECORD_PUBLICATION", "composition._JOINABLE", "rows.OPERATOR_RETRY"} <= set(NAMED_ROWS)


def test_the_check_sees_a_walk_by_status(db):
    walk = "SELECT id FROM email_outbox WHERE id IN (SELECT value FROM json_each(?)) AND status IN ('pending', 'retry')"
    assert walks_the_outbox_by_status(db, walk) != []
