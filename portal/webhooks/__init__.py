"""The provider's receipts: POST /webhooks/resend, served by its own small WSGI app.

The provider has no session, no form and no browser, so none of the portal app's per-request
machinery (sessions, sign-in, CSRF, rate limits) applies to it. The factory mounts this app under
/webhooks; skipping that machinery is most of what a receipt would otherwise cost.
"""
from __future__ import annotations

from flask import Blueprint, Flask

bp = Blueprint("webhooks", __name__)

from portal.webhooks import routes  # noqa: E402,F401  (registers the views on bp)

MOUNT_POINT = "/webhooks"
MAX_RECEIPT_BYTES = 256 * 1024


def create_webhook_app(context, *, testing: bool = False) -> Flask:
    """The receipt endpoint's app, sharing the portal's PortalContext (settings, database, Redis)."""
    from portal.access import enforce_declared_access

    app = Flask(__name__)
    app.config.update(TESTING=testing, MAX_CONTENT_LENGTH=MAX_RECEIPT_BYTES)
    app.extensions["portal"] = context
    app.before_request(enforce_declared_access)
    app.register_blueprint(bp)
    return app
