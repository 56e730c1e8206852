"""The portal's log lines: text by default, or one JSON object a line (LOG_FORMAT=json).

The same setup for the web app (portal/__init__.py), gunicorn's own error log
(portal/web/gunicorn_logging.py) and the worker (portal/outbox/worker.py). Every record
carries `request_id` and `outbox_id` where known (portal/core/log_context.py).

What never goes into a log line is the callers' duty (only error class names, never messages of
database or HTTP errors, which can carry addresses); e2e/test_no_secrets_in_logs.py searches every
log of a browser run for addresses, tokens and email bodies.
"""

from __future__ import annotations

import logging
import sys

from pythonjsonlogger.json import JsonFormatter

from portal.core.log_context import ContextFilter
from portal.core.redaction import RedactingFilter

TEXT_FORMAT = "%(asctime)s %(name)s %(levelname)s %(message)s"
_MARK = "_portal_handler"


def json_formatter() -> logging.Formatter:
    return JsonFormatter(
        "%(asctime)s %(levelname)s %(name)s %(process)d %(message)s %(request_id)s %(outbox_id)s",
        rename_fields={"asctime": "time", "levelname": "level", "name": "logger", "process": "pid"},
        datefmt="%Y-%m-%dT%H:%M:%S%z",
    )


def formatter_for(log_format: str) -> logging.Formatter:
    return json_formatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT)


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever sys.stderr is when a line is written (as logging's last-resort handler
    does), so an app built under a test runner that swaps sys.stderr never writes to a closed one."""

    def __init__(self):
        logging.Handler.__init__(self)

    @property
    def stream(self):
        return sys.stderr


def configure_logging(log_format: str, level: int = logging.INFO) -> None:
    """One handler on the root logger (stderr), in the chosen format; running it again replaces it."""
    root = logging.getLogger()
    for handler in [h for h in root.handlers if getattr(h, _MARK, False)]:
        root.removeHandler(handler)
    handler = _StderrHandler()
    handler.setFormatter(formatter_for(log_format))
    handler.addFilter(ContextFilter())
    handler.addFilter(RedactingFilter())  # Flask logs an unhandled error with its path: a link's token
    setattr(handler, _MARK, True)
    root.addHandler(handler)
    root.setLevel(level)
