"""The deploy files start what exists: gunicorn's configuration loads the app, bad settings stop it
with one line, and every command in the Procfile and the systemd units names a real file."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.ops.support import ROOT


def check_config(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gunicorn", "--config", str(ROOT / "gunicorn.conf.py"), "--check-config"],
        env={"PATH": os.environ.get("PATH", ""), **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_gunicorn_configuration_loads_the_portal(settings):
    result = check_config({"DATABASE_URL": settings.database_url, "SECRET_KEY": "k", "REDIS_URL": settings.redis_url})
    assert result.returncode == 0, result.stderr


def test_a_bad_setting_stops_gunicorn_with_one_line_naming_it(settings):
    result = check_config({"DATABASE_URL": settings.database_url, "SECRET_KEY": "k", "TRUSTED_PROXY_COUNT": "all"})
    assert result.returncode != 0
    assert "configuration error: TRUSTED_PROXY_COUNT must be a whole number" in result.stderr


def test_procfile_and_units_start_files_that_exist():
    procfile = dict(line.split(": ", 1) for line in (ROOT / "Procfile").read_text().splitlines() if line.strip())
    assert set(procfile) == {"release", "web", "worker"}
    assert "--config gunicorn.conf.py" in procfile["web"] and procfile["worker"] == "python worker.py"
    for unit in ("portal-web.service", "portal-worker@.service"):
        text = (ROOT / "deploy" / unit).read_text()
        for path in re.findall(r"/opt/portal/([\w.]+\.py)", text) + re.findall(r" ([\w.]+\.py)\b", text):
            assert (ROOT / path).exists(), f"{unit} starts {path}, which is not in the repository"
        assert "PROMETHEUS_MULTIPROC_DIR=/run/portal-metrics" in text
    assert "/run/portal-metrics" in (ROOT / "deploy" / "portal.tmpfiles.conf").read_text()
