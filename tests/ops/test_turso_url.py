"""DATABASE_URL for Turso, as the installed libSQL client sends it (docs/deploy.md).

A Turso server is not available here, so a recorder stands in for one: it only writes down the
path and the Authorization header of each request the client makes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from devtools.processes import free_port, stop_process, wait_for_port
from portal.core.db import Database

RECORDER = """
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
class Recorder(BaseHTTPRequestHandler):
    def log_message(self, *args): pass
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        print(json.dumps({"path": self.path, "authorization": self.headers.get("Authorization")}), flush=True)
        self.send_response(500); self.send_header("Content-Length", "0"); self.end_headers()
HTTPServer(("127.0.0.1", int(sys.argv[1])), Recorder).serve_forever()
"""


@pytest.fixture
def recorder():
    port = free_port()
    # A process of its own: the libSQL client holds the interpreter while it waits for an answer.
    process = subprocess.Popen([sys.executable, "-c", RECORDER, str(port)], stdout=subprocess.PIPE, text=True)
    wait_for_port(port, process=process)
    yield port, process
    stop_process(process)


def test_the_auth_token_goes_in_the_bearer_header_not_the_url(recorder):
    port, process = recorder
    db = Database(f"sqlite+libsql://127.0.0.1:{port}/?authToken=turso-token-123")
    with pytest.raises(ValueError, match="500"):  # the client raises the recorder's 500 as it comes
        db.ping()
    db.dispose()
    request = json.loads(process.stdout.readline())
    assert request["authorization"] == "Bearer turso-token-123"
    assert request["path"] == "/v3/pipeline" and "turso-token-123" not in request["path"]


def test_an_embedded_replica_keeps_its_file_name_and_takes_its_options():
    from sqlalchemy.engine import make_url

    from portal.core.db import turso_connect_args

    url, args = turso_connect_args(
        make_url(
            "sqlite+libsql:////var/lib/portal/replica.db?sync_url=https://db-org.turso.io&authToken=t&sync_interval=5"
        )
    )
    assert url.database == "/var/lib/portal/replica.db" and not url.query
    assert args == {"sync_url": "https://db-org.turso.io", "auth_token": "t", "sync_interval": 5.0}
