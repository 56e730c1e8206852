"""The attendance API's own small WSGI app, mounted by the factory at /api.

The platforms have no session, form or browser, so the portal app's per-request machinery
(sessions, sign-in, CSRF, rate limits) does not apply; the lean app of portal/web/lean_app.py, like the receipt app's.
"""

from __future__ import annotations

from flask import Flask, jsonify

from portal.attendance.routes import bp
from portal.web.lean_app import create_lean_app

MOUNT_POINT = "/api"
MAX_BODY_BYTES = 1024 * 1024


def create_api_app(context, *, testing: bool = False) -> Flask:
    """The API app, sharing the portal's PortalContext (settings, database, Redis); it answers
    errors in JSON, since its callers read JSON."""
    app = create_lean_app(__name__, context, bp, max_bytes=MAX_BODY_BYTES, testing=testing)
    app.register_error_handler(413, lambda _e: (jsonify(error="too_large", max_bytes=MAX_BODY_BYTES), 413))
    app.register_error_handler(404, lambda _e: (jsonify(error="not_found"), 404))
    app.register_error_handler(405, lambda _e: (jsonify(error="method_not_allowed"), 405))
    return app
