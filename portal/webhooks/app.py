"""The receipt endpoint's own small Flask app, mounted by the factory under /webhooks.

The provider has no session, no form and no browser, so none of the portal app's per-request
machinery (sessions, sign-in, CSRF, rate limits) applies to it; skipping that machinery is most
of what a receipt would otherwise cost.
"""

from __future__ import annotations

from flask import Flask

from portal.access import enforce_declared_access
from portal.extensions import EXTENSION_KEY
from portal.webhooks.routes import bp

MOUNT_POINT = "/webhooks"
MAX_RECEIPT_BYTES = 256 * 1024


def create_webhook_app(context, *, testing: bool = False) -> Flask:
    """The receipt endpoint's app, sharing the portal's PortalContext (settings, database, Redis)."""
    app = Flask(__name__)
    app.config.update(TESTING=testing, MAX_CONTENT_LENGTH=MAX_RECEIPT_BYTES)
    app.extensions[EXTENSION_KEY] = context
    app.before_request(enforce_declared_access)
    app.register_blueprint(bp)
    return app
