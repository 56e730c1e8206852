"""The receipt endpoint's own small Flask app, mounted by the factory under /webhooks.

The provider has no session, no form and no browser, so none of the portal app's per-request
machinery (sessions, sign-in, CSRF, rate limits) applies to it; skipping that machinery is most
of what a receipt would otherwise cost.
"""

from __future__ import annotations

from flask import Blueprint, Flask

from portal.access import enforce_declared_access
from portal.extensions import EXTENSION_KEY
from portal.webhooks.routes import bp

MOUNT_POINT = "/webhooks"
MAX_RECEIPT_BYTES = 256 * 1024


def create_lean_app(import_name: str, context, blueprint: Blueprint, *, max_bytes: int, testing: bool) -> Flask:
    """An app for senders that are servers, not browsers (no sessions, CSRF or layout), sharing the
    portal's PortalContext; every view still declares who may call it."""
    app = Flask(import_name)
    app.config.update(TESTING=testing, MAX_CONTENT_LENGTH=max_bytes)
    app.extensions[EXTENSION_KEY] = context
    app.before_request(enforce_declared_access)
    app.register_blueprint(blueprint)
    return app


def create_webhook_app(context, *, testing: bool = False) -> Flask:
    """The receipt endpoint's app, sharing the portal's PortalContext (settings, database, Redis)."""
    return create_lean_app(__name__, context, bp, max_bytes=MAX_RECEIPT_BYTES, testing=testing)
