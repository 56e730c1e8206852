"""An HTTP proxy in front of a libSQL server that counts the requests passing through it (and of
those, the ones that open a new stream, a connection of the server's), and can lose the answer to
one of them.

bench/db_roundtrips.py points the portal's DATABASE_URL here, and tests/ops/test_hrana_on_sqld.py. sqld's own request log is not a
count: under its debug trace, some requests on a kept-alive connection never reach the log. The
proxy runs in a process of its own: the libSQL client keeps the GIL while it waits for an answer,
so a proxy thread in the client's process would never get to answer it.

    python -m devtools.counting_proxy UPSTREAM_PORT PORT
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from devtools.processes import free_port, stop_process, wait_for_port

COUNT_PATH = "/__requests"  # the proxy's own: how many it has passed on
STREAMS_PATH = "/__new_streams"  # how many of them opened a stream (a pipeline without a baton)
DROP_PATH = "/__drop_next_answer"  # the next request reaches the server; its answer never comes back


class CountingProxy:
    def __init__(self, upstream_port: int):
        self.upstream_port = upstream_port
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    def start(self) -> CountingProxy:
        root = Path(__file__).resolve().parents[1]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "devtools.counting_proxy", str(self.upstream_port), str(self.port)], cwd=root
        )
        wait_for_port(self.port, process=self.process)
        return self

    def requests(self) -> int:
        """Requests passed on so far, health checks left out."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{COUNT_PATH}", timeout=10) as answer:
            return int(answer.read())

    def new_streams(self) -> int:
        """Requests passed on so far that opened a new stream on the server."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{STREAMS_PATH}", timeout=10) as answer:
            return int(answer.read())

    def drop_next_answer(self) -> None:
        """The next request is passed on and answered by the server, and the answer is thrown away:
        the client's connection closes without one (a lost answer)."""
        urllib.request.urlopen(f"http://127.0.0.1:{self.port}{DROP_PATH}", timeout=10).read()

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process)
            self.process = None


def serve(upstream_port: int, port: int) -> None:
    count, opened, dropping = 0, 0, False
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keeps connections alive, as the server itself does

        def do_GET(self):
            nonlocal dropping
            if self.path == COUNT_PATH:
                with lock:
                    self._answer(200, [], str(count).encode())
                return
            if self.path == STREAMS_PATH:
                with lock:
                    self._answer(200, [], str(opened).encode())
                return
            if self.path == DROP_PATH:
                with lock:
                    dropping = True
                self._answer(200, [], b"ok")
                return
            self._pass_on()

        def do_POST(self):
            self._pass_on()

        def _pass_on(self):
            nonlocal count, opened, dropping
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            drop = False
            if self.path != "/health":
                with lock:
                    count += 1
                    opened += self.path.endswith("/pipeline") and json.loads(body or b"{}").get("baton") is None
                    drop, dropping = dropping, False
            upstream = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=60)
            try:
                headers = {name: value for name, value in self.headers.items() if name.lower() != "connection"}
                upstream.request(self.command, self.path, body=body, headers=headers)
                answer = upstream.getresponse()
                data = answer.read()
            finally:
                upstream.close()
            if drop:
                self.close_connection = True
                return
            kept = [(n, v) for n, v in answer.getheaders() if n.lower() not in ("transfer-encoding", "content-length")]
            self._answer(answer.status, kept, data)

        def _answer(self, status: int, headers, data: bytes):
            self.send_response(status)
            for name, value in headers:
                if name.lower() != "connection":
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):  # quiet: the bench prints its own lines
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    serve(int(sys.argv[1]), int(sys.argv[2]))
