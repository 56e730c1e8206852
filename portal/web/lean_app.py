"""The lean app that the receipt endpoint (/webhooks) and the attendance API (/api) each run.

Their callers are servers, not browsers: no session, no form, no layout, so none of the portal
app's per-request machinery (sign-in, CSRF, rate limits) applies, and skipping it is most of what
a request would otherwise cost.
"""

from __future__ import annotations

from flask import Blueprint, Flask

from portal.web.access import enforce_declared_access
from portal.web.extensions import EXTENSION_KEY

# JSON for servers: nothing on these answers may load, run or be framed, whatever a browser that
# lands here makes of them; the same on errors (404, 405, 413) as on answers.
API_SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
HSTS = "max-age=31536000; includeSubDomains"


def create_lean_app(import_name: str, context, blueprint: Blueprint, *, max_bytes: int, testing: bool) -> Flask:
    """An app sharing the portal's PortalContext; every view still declares who may call it."""
    app = Flask(import_name)
    app.config.update(TESTING=testing, MAX_CONTENT_LENGTH=max_bytes)
    app.extensions[EXTENSION_KEY] = context
    app.before_request(enforce_declared_access)
    app.register_blueprint(blueprint)
    headers = security_headers(context.settings)

    @app.after_request
    def add_security_headers(response):
        for name, value in headers.items():
            response.headers.setdefault(name, value)
        return response

    return app


def security_headers(settings) -> dict[str, str]:
    """The headers on every answer of a lean app, whether Flask or a WSGI fast path in front of it
    (portal/webhooks/app.py) writes the answer; HSTS outside development."""
    return {**API_SECURITY_HEADERS, **({"Strict-Transport-Security": HSTS} if settings.is_deployed else {})}
