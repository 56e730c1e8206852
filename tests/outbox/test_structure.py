"""Structural checks: every queue has a consumer, every job function exists, the engine has no Flask."""
import subprocess
import sys

from rq.utils import import_attribute

from portal.outbox.publish import DEAD_LETTER_FUNCTION, JOB_FUNCTION
from portal.outbox.queues import ALL_QUEUES
from portal.outbox.statuses import ALL, SETTLED, UNSETTLED
from portal.outbox.worker import worker_queues


def test_every_queue_has_a_consumer(redis_server):
    assert sorted(q.name for q in worker_queues(redis_server.client())) == sorted(ALL_QUEUES)


def test_job_functions_resolve():
    for path in (JOB_FUNCTION, DEAD_LETTER_FUNCTION):
        assert callable(import_attribute(path))


def test_statuses_match_the_schema(db):
    with db.read() as conn:
        ddl = conn.exec_driver_sql("SELECT sql FROM sqlite_master WHERE name = 'email_outbox'").scalar()
    for status in ALL:
        assert f"'{status}'" in ddl
    assert set(SETTLED) | set(UNSETTLED) == set(ALL)


def test_the_email_engine_loads_without_flask():
    code = ("import sys, portal.outbox.worker, portal.outbox.consumer, portal.outbox.relay; "
            "print('flask' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "False", result.stderr
