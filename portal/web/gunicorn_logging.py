"""Gunicorn's logger for the portal: the access log without secrets (portal.web.access_log), and with
LOG_FORMAT=json both of gunicorn's logs as one JSON object a line, like the app's and the worker's.

Selected by gunicorn.conf.py (`logger_class`). The access line carries the request's ID from the
X-Request-ID response header (portal/web/observability.py), so it joins the app's lines for the
same request.
"""

from __future__ import annotations

import json
import os
import time
import traceback

from portal.core.logs import json_formatter
from portal.core.redaction import RedactingFilter, redact
from portal.web.access_log import RedactingLogger


class PortalLogger(RedactingLogger):
    def setup(self, cfg):
        super().setup(cfg)
        self.json = os.environ.get("LOG_FORMAT") == "json"
        for handler in self.error_log.handlers:
            handler.addFilter(RedactingFilter())
            if self.json:
                handler.setFormatter(json_formatter())

    def access(self, resp, req, environ, request_time):
        if not self.json:
            return super().access(resp, req, environ, request_time)
        if not self.access_log_enabled:
            return
        try:
            atoms = self.atoms(resp, req, environ, request_time)  # already redacted
            # The path as the client sent it: PATH_INFO has lost the mount point of a lean app
            # (/webhooks, /api) by the time the line is written.
            path, _, query = (environ.get("RAW_URI") or atoms["U"] or "").partition("?")
            line = {
                "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "level": "INFO",
                "logger": "gunicorn.access",
                "remote_addr": atoms["h"],
                "method": atoms["m"],
                "path": redact(path),
                "query": redact(query) or None,
                "status": atoms["s"],
                "bytes": atoms["B"],
                "duration_ms": atoms["M"],
                "referer": redact(atoms.get("f") or "-"),
                "user_agent": atoms.get("a"),
                "request_id": atoms.get("{x-request-id}o"),
            }
            self.access_log.info(json.dumps(line))
        except Exception:
            self.error(traceback.format_exc())
