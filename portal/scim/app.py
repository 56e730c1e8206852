"""The SCIM API's own small WSGI app, mounted by the factory at /scim/v2 (the lean app of
portal/web/lean_app.py, like the attendance API's): no session, no CSRF, RFC 7644's JSON errors."""

from __future__ import annotations

from flask import Flask

from portal.scim.routes import bp, scim_error
from portal.web.lean_app import create_lean_app

MOUNT_POINT = "/scim/v2"
MAX_BODY_BYTES = 256 * 1024


def create_scim_app(context, *, testing: bool = False) -> Flask:
    app = create_lean_app(__name__, context, bp, max_bytes=MAX_BODY_BYTES, testing=testing)
    app.register_error_handler(400, lambda _e: scim_error(400, "The request could not be read.", "invalidSyntax"))
    app.register_error_handler(404, lambda _e: scim_error(404, "There is nothing at this address."))
    app.register_error_handler(405, lambda _e: scim_error(405, "That method is not available here."))
    app.register_error_handler(413, lambda _e: scim_error(413, "The request is too large."))
    app.register_error_handler(500, lambda _e: scim_error(500, "The error was logged."))
    return app
