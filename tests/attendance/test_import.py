"""`flask attendance import FILE.csv`: the API's rules from a file, all or nothing, in constant memory."""

import json
import os
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from portal.attendance.queries import company_attendance, unmatched_sessions
from tests.attendance.conftest import session

HEADER = "platform,session_id,volunteer_email,held_at,minutes,status,updated_at\n"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def acme(make_user, company_id):
    make_user("employee", company="Acme Ltd", email="heidi@acme.example")
    make_user("employee", company="Acme Ltd", email="olav@acme.example")
    return company_id("Acme Ltd")


@pytest.fixture
def csv_file(tmp_path):
    def write(text, name="sessions.csv"):
        path = tmp_path / name
        path.write_text(text)
        return str(path)

    return write


GOOD = HEADER + textwrap.dedent("""\
    language,lang-1,heidi@acme.example,2026-11-03T17:00:00Z,60,attended,2026-11-03T18:00:00Z
    language,lang-2,HEIDI@acme.example,2026-11-10T17:00:00+01:00,45,attended,2026-11-10T18:00:00Z
    mentorship,ment-1,olav@acme.example,2026-11-04T08:00:00Z,90,no_show,2026-11-04T10:00:00Z
    mentorship,ment-2,newcomer@acme.example,2026-11-05T08:00:00Z,30,attended,2026-11-05T10:00:00Z
    """)


def test_a_clean_file_is_imported_and_counted(runner, csv_file, db, acme):
    result = runner.invoke(args=["attendance", "import", csv_file(GOOD)])
    assert result.exit_code == 0, result.output
    assert "received 4, applied 4, unmatched 1, stale 0" in result.output
    assert "importing" in result.output  # the progress bar
    assert company_attendance(db, company_id=acme).minutes == 105  # the no-show does not count
    assert unmatched_sessions(db) == 1

    again = runner.invoke(args=["attendance", "import", csv_file(GOOD)])
    assert "received 4, applied 0, unmatched 0, stale 4" in again.output
    assert company_attendance(db, company_id=acme).minutes == 105


def test_one_bad_line_refuses_the_file_and_names_its_line(runner, csv_file, db, acme, count):
    bad = GOOD + "language,lang-3,heidi@acme.example,2026-11-12T17:00:00,0,attended,2026-11-12T18:00:00Z\n"
    bad += "language,lang-4,heidi@acme.example,2026-11-13T17:00:00Z,60,maybe,2026-11-13T18:00:00Z\n"
    result = runner.invoke(args=["attendance", "import", csv_file(bad)])
    assert result.exit_code != 0
    assert "line 6: held_at has no time zone" in result.output and "minutes must be" in result.output
    assert "line 7: status must be" in result.output
    assert "2 of 6 lines are invalid; nothing was imported" in result.output
    assert "heidi@" not in result.output
    assert count("attendance_sessions") == 0


def test_minutes_written_in_other_digits_name_their_line(runner, csv_file, count, acme):
    """ "²" and "٦٠" are digits to Python's str.isdigit, but no number of minutes a platform sends."""
    bad = HEADER + "language,lang-9,heidi@acme.example,2026-11-12T17:00:00Z,²,attended,2026-11-12T18:00:00Z\n"
    bad += "language,lang-8,heidi@acme.example,2026-11-12T17:00:00Z,٦٠,attended,2026-11-12T18:00:00Z\n"
    result = runner.invoke(args=["attendance", "import", csv_file(bad)])
    assert result.exit_code != 0
    assert "line 2: minutes must be" in result.output and "line 3: minutes must be" in result.output
    assert count("attendance_sessions") == 0


def test_platform_option_for_files_without_the_column(runner, csv_file, db, acme):
    lines = (
        "session_id,volunteer_email,held_at,minutes,status,updated_at\n"
        "lang-1,heidi@acme.example,2026-11-03T17:00:00Z,60,attended,2026-11-03T18:00:00Z\n"
    )
    refused = runner.invoke(args=["attendance", "import", csv_file(lines)])
    assert refused.exit_code != 0 and "line 1: the header lacks platform (or give --platform)" in refused.output
    result = runner.invoke(args=["attendance", "import", csv_file(lines), "--platform", "language"])
    assert result.exit_code == 0, result.output
    assert company_attendance(db, company_id=acme).minutes == 60


def test_a_line_naming_another_platform_than_the_option_is_bad(runner, csv_file, count, acme):
    result = runner.invoke(args=["attendance", "import", csv_file(GOOD), "--platform", "language"])
    assert result.exit_code != 0
    assert "line 4: platform differs from --platform language" in result.output
    assert count("attendance_sessions") == 0


def test_imports_and_the_api_share_one_version_order(runner, csv_file, post_attendance, db, acme):
    post_attendance([session(1, session_id="lang-1", minutes=50, updated_at="2026-11-20T09:00:00Z")])
    result = runner.invoke(args=["attendance", "import", csv_file(GOOD)])
    # lang-1 in the file is older than what the platform sent since: it is stale.
    assert "applied 3, unmatched 1, stale 1" in result.output
    assert company_attendance(db, company_id=acme).minutes == 50 + 45


def _write_lines(path: Path, count: int) -> None:
    """A platform's export: sessions in time order, two minutes apart, 5,000 volunteers."""
    start = datetime(2025, 1, 1, tzinfo=UTC)
    with open(path, "w") as out:
        out.write(HEADER)
        for i in range(count):
            held = (start + timedelta(minutes=2 * i)).strftime("%Y-%m-%dT%H:%M:%SZ")
            out.write(
                f"language,lang-{i:07d},volunteer{i % 5000}@acme.example,{held},{1 + i % 600},attended,"
                "2026-12-01T10:00:00+01:00\n"
            )


PROBE = """
import json, resource, sys
from portal import create_app
app = create_app()
runner = app.test_cli_runner()
def resident_kib():  # the memory in use now (ru_maxrss is the peak so far)
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() // 1024
before = resident_kib()
result = runner.invoke(args=["attendance", "import", sys.argv[1]])
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"exit": result.exit_code, "output": result.output[-300:], "growth_kib": after - before}))
"""


def _import_in_a_fresh_process(path: Path, database_path: Path, tmp_path: Path) -> dict:
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite+libsql:///{database_path}",
        "SECRET_KEY": "memory-test",
        "PORTAL_INSTANCE_PATH": str(tmp_path / "instance"),
        "PORTAL_ENV": "development",
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(path)], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_large_file_is_imported_in_constant_memory(tmp_path, database_path):
    """Ten times the lines may not take ten times the memory: the file is streamed, never loaded."""
    small, large = tmp_path / "small.csv", tmp_path / "large.csv"
    _write_lines(small, 20_000)
    _write_lines(large, 200_000)
    first = _import_in_a_fresh_process(small, database_path, tmp_path)
    second = _import_in_a_fresh_process(large, database_path, tmp_path)
    assert first["exit"] == 0 and "received 20000, applied 20000" in first["output"], first
    # The large file repeats the small one's 20,000 sessions (now stale) and adds 180,000.
    assert second["exit"] == 0 and "applied 180000, unmatched 180000, stale 20000" in second["output"], second
    # 200,000 records held at once would be well over 100 MiB; a streamed import stays within a few MiB
    # of the small file's peak (batches, SQLite's bounded page cache).
    assert second["growth_kib"] < first["growth_kib"] + 16 * 1024, (first, second)
