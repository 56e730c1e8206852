"""The receipt endpoint's own small Flask app, mounted by the factory under /webhooks.

The provider has no session, no form and no browser, so none of the portal app's per-request
machinery (sessions, sign-in, CSRF, rate limits) applies to it; skipping that machinery is most
of what a receipt would otherwise cost. The one route's common request (a POST with a declared
length within the limit) is served by a WSGI fast path in front of the app, which calls the same
`answer_receipt` as the view: Flask's request and application contexts, URL matching and
response object were a fifth of what remained. Everything else (another path or method, a
missing or too large length) goes to Flask, which answers 404, 405 or 413 as before.
"""

from __future__ import annotations

import logging
from http import HTTPStatus

from flask import Flask

from portal.web.access import PUBLIC
from portal.web.lean_app import create_lean_app, security_headers
from portal.webhooks.routes import ANSWER_BODIES, answer_receipt, bp, extra_headers

MOUNT_POINT = "/webhooks"
MAX_RECEIPT_BYTES = 256 * 1024
RECEIPT_PATH = "/resend"
RECEIPT_ENDPOINT = "webhooks.resend_receipt"
# The headers answer_receipt reads (signature.SIGNATURE_HEADERS), as WSGI names them.
_SIGNATURE_ENVIRON = {
    "svix-id": "HTTP_SVIX_ID",
    "svix-timestamp": "HTTP_SVIX_TIMESTAMP",
    "svix-signature": "HTTP_SVIX_SIGNATURE",
}
_STATUS_LINES = {status.value: f"{status.value} {status.phrase}" for status in HTTPStatus}


def create_webhook_app(context, *, testing: bool = False) -> Flask:
    """The receipt endpoint's app, sharing the portal's PortalContext (settings, database, Redis);
    its wsgi_app (what the factory mounts) serves the receipt itself and hands the rest to Flask."""
    app = create_lean_app(__name__, context, bp, max_bytes=MAX_RECEIPT_BYTES, testing=testing)
    # The fast path skips enforce_declared_access: it may only ever serve a view declared public.
    if getattr(app.view_functions[RECEIPT_ENDPOINT], "access", None) != PUBLIC:
        raise RuntimeError(f"{RECEIPT_ENDPOINT} is not declared public; the fast path must not serve it")
    app.wsgi_app = ReceiptFastPath(context, app.wsgi_app, logging.getLogger(app.name))
    return app


class ReceiptFastPath:
    """WSGI middleware: POST /resend with a Content-Length up to MAX_RECEIPT_BYTES is answered here,
    with the lean app's security headers, as Flask's answers carry them."""

    def __init__(self, context, flask_wsgi_app, log: logging.Logger):
        self.context, self.flask_wsgi_app, self.log = context, flask_wsgi_app, log
        self.security_headers = list(security_headers(context.settings).items())

    def __call__(self, environ, start_response):
        length = environ.get("CONTENT_LENGTH") or ""
        if (
            environ.get("PATH_INFO") != RECEIPT_PATH
            or environ.get("REQUEST_METHOD") != "POST"
            or not length.isdigit()
            or int(length) > MAX_RECEIPT_BYTES
            or "HTTP_TRANSFER_ENCODING" in environ
        ):
            return self.flask_wsgi_app(environ, start_response)
        body = environ["wsgi.input"].read(int(length))
        headers = {name: environ.get(key, "") for name, key in _SIGNATURE_ENVIRON.items()}
        status, key = answer_receipt(self.context, body, headers, self.log)
        payload = ANSWER_BODIES[key]
        start_response(
            _STATUS_LINES[status],
            [
                ("Content-Type", "application/json"),
                ("Content-Length", str(len(payload))),
                *extra_headers(status),
                *self.security_headers,
            ],
        )
        return [payload]
