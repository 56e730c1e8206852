"""The lean app that the receipt endpoint (/webhooks) and the attendance API (/api) each run.

Their callers are servers, not browsers: no session, no form, no layout, so none of the portal
app's per-request machinery (sign-in, CSRF, rate limits) applies, and skipping it is most of what
a request would otherwise cost.
"""

from __future__ import annotations

from flask import Blueprint, Flask

from portal.web.access import enforce_declared_access
from portal.web.extensions import EXTENSION_KEY


def create_lean_app(import_name: str, context, blueprint: Blueprint, *, max_bytes: int, testing: bool) -> Flask:
    """An app sharing the portal's PortalContext; every view still declares who may call it."""
    app = Flask(import_name)
    app.config.update(TESTING=testing, MAX_CONTENT_LENGTH=max_bytes)
    app.extensions[EXTENSION_KEY] = context
    app.before_request(enforce_declared_access)
    app.register_blueprint(blueprint)
    return app
