"""Structural checks against independent facts: the migrated schema, the relay and the claim, the
modules a fresh interpreter loads. (Which queues a real worker listens on: test_workers.py.)"""

import re
import subprocess
import sys

from rq.utils import import_attribute

from portal.core import clock
from portal.outbox.ground.statuses import ALL, SETTLED, UNSETTLED
from portal.outbox.send.claims import claim_outbox_row
from portal.outbox.write.publish import DEAD_LETTER_FUNCTION, JOB_FUNCTION
from portal.outbox.write.relay import rows_to_publish
from tests.test_floors import AREAS


def test_job_functions_resolve():
    for path in (JOB_FUNCTION, DEAD_LETTER_FUNCTION):
        assert callable(import_attribute(path))


def schema_sql(db, name):
    with db.read() as conn:
        return conn.exec_driver_sql("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).scalar_one()


def quoted(sql):
    return set(re.findall(r"'([a-z_]+)'", sql))


def test_the_schema_allows_exactly_the_statuses_the_code_knows(db):
    check = re.search(
        r"status TEXT NOT NULL DEFAULT 'pending' CHECK \(status IN \((.*?)\)\)", schema_sql(db, "email_outbox"), re.S
    )
    assert check, "the status CHECK constraint is gone from email_outbox"
    assert quoted(check.group(1)) == set(ALL)


def test_the_relays_index_covers_exactly_the_unsettled_statuses(db):
    where = schema_sql(db, "email_outbox_unsettled").split("WHERE", 1)[1]
    assert quoted(where) == set(UNSETTLED)


def test_unsettled_rows_are_picked_up_again_and_settled_ones_never(ctx, make_outbox_row):
    """Every row in an unsettled status, left long enough, is republished by the relay and may be
    claimed; a settled row never is, however old."""
    long_ago = "2000-01-01T00:00:00.000000Z"
    ids = {
        status: make_outbox_row(
            status=status,
            provider_message_id=None,
            updated_at=long_ago,
            enqueued_at=long_ago,
            next_attempt_at=long_ago,
            claim_expires_at=long_ago,
        )
        for status in ALL
    }
    status_of = {outbox_id: status for status, outbox_id in ids.items()}

    assert {status_of[i] for i in rows_to_publish(ctx.db, ctx.settings, now=clock.utcnow())} == set(UNSETTLED)
    claimable = {
        status
        for status, outbox_id in ids.items()
        if claim_outbox_row(ctx.db, outbox_id, claim_seconds=60, now=clock.utcnow())
    }
    assert claimable == set(UNSETTLED)
    assert set(SETTLED) == set(ALL) - claimable


def test_the_engine_loads_no_area_and_no_flask():
    code = """
import pkgutil, importlib, sys
import portal.outbox
for module in pkgutil.walk_packages(portal.outbox.__path__, "portal.outbox."):
    importlib.import_module(module.name)
print("\\n".join(sorted(sys.modules)))
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    loaded = set(result.stdout.split())
    assert "portal.outbox.worker" in loaded and "portal.outbox.hear.receipts" in loaded, "every module was imported"
    forbidden = {"flask", "portal.web", "portal.context", "portal.email_families"} | {
        f"portal.{area}" for area in AREAS
    }
    offending = {
        name
        for name in loaded
        if name in forbidden or name.split(".")[0] == "flask" or any(name.startswith(f"{area}.") for area in forbidden)
    }
    assert offending == set()


def test_the_worker_with_every_area_loads_no_web_framework():
    """worker.py imports the areas' email families and periodic passes: none of them may pull in
    the web side (a worker's start-up is paid on every deploy and every restart)."""
    # The imports of worker.py's main(), which runs them inside the function.
    code = """
import sys
from portal.campaigns.sending import campaign_task
from portal.context import build_context
from portal.outbox.worker import run_worker
from portal.report_emails.operations import schedule_task
import portal.email_families
print("\\n".join(sorted(sys.modules)))
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    web = {name for name in result.stdout.split() if name.split(".")[0] in ("flask", "wtforms", "flask_wtf")}
    assert web == set()


# Every statement that changes a table stands in that table's statement book, and nowhere else.
BOOKS = {
    "email_outbox": "ground/rows.py",
    "email_batches": "ground/batch_rows.py",
    "email_batch_requests": "ground/batch_rows.py",
}
CHANGES = re.compile(r"\b(?:UPDATE|INSERT(?:\s+OR\s+\w+)?\s+INTO|DELETE\s+FROM|REPLACE\s+INTO)\s+\"?(\w+)\b", re.I)


def statements_that_change(root):
    """(table, file) for every statement in the portal's code that changes a table."""
    found = set()
    for path in sorted(root.rglob("*.py")):
        for table in CHANGES.findall(path.read_text()):
            found.add((table, path.relative_to(root).as_posix()))
    return found


def test_every_statement_that_changes_an_email_table_is_in_its_book():
    from tests.outbox.conftest import ROOT

    outside = {
        (table, path)
        for table, path in statements_that_change(ROOT / "portal")
        if table in BOOKS and path != f"outbox/{BOOKS[table]}"
    }
    assert outside == set(), "move these statements into their table's book"


def test_the_book_check_sees_a_statement_outside_its_book(tmp_path):
    (tmp_path / "elsewhere.py").write_text('SQL = "UPDATE email_outbox SET status = :s WHERE id = :id"')
    (tmp_path / "other.py").write_text("SQL = 'INSERT OR IGNORE INTO email_batches (id) VALUES (:id)'")
    assert statements_that_change(tmp_path) == {("email_outbox", "elsewhere.py"), ("email_batches", "other.py")}
