"""Security headers on every page (issue 14, finding 5)."""

from __future__ import annotations

import io
import json

import pytest

from portal import create_app
from portal.web.extensions import EXTENSION_KEY
from tests.builders import event, sign


def _directives(policy: str) -> dict[str, list[str]]:
    return {part.split()[0]: part.split()[1:] for part in policy.split(";") if part.strip()}


@pytest.mark.parametrize("path", ["/login", "/apply", "/demo", "/no-such-page"])
def test_every_page_forbids_framing_sniffing_referrers_and_inline_script(client, path):
    headers = client.get(path).headers
    csp = _directives(headers["Content-Security-Policy"])
    assert csp["script-src"] == ["'self'"] and "'unsafe-inline'" not in csp.get("style-src", [])
    assert csp["frame-ancestors"] == ["'none'"] and csp["object-src"] == ["'none'"]
    assert headers["X-Frame-Options"] == "DENY"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "no-referrer"


def test_error_answers_carry_the_headers_too(client, auth):
    data = {"email": (io.BytesIO(b"x"), "x.txt"), "password": "p", "csrf_token": auth.csrf_token()}
    response = client.post("/login", data=data, content_type="multipart/form-data")
    assert response.status_code == 400
    assert response.headers["X-Frame-Options"] == "DENY"


def test_hsts_only_in_production(client, settings):
    assert "Strict-Transport-Security" not in client.get("/login").headers
    production = create_app({"TESTING": True}, settings=settings.with_overrides(portal_env="production"))
    try:
        hsts = production.test_client().get("/login").headers["Strict-Transport-Security"]
    finally:
        production.extensions[EXTENSION_KEY].db.dispose()
    assert int(hsts.split("max-age=")[1].split(";")[0]) >= 180 * 86400


@pytest.mark.parametrize(
    ("method", "path", "body", "status"),
    [
        ("get", "/webhooks/resend", b"", 405),
        ("post", "/webhooks/no-such-hook", b"{}", 404),
        ("get", "/api/attendance", b"", 405),
        ("post", "/api/no-such-endpoint", b"{}", 404),
        ("post", "/api/attendance", b"x" * (2 * 1024 * 1024), 413),
    ],
)
def test_the_lean_apps_answer_errors_with_the_headers_too(client, method, path, body, status):
    response = getattr(client, method)(path, data=body)
    assert response.status_code == status
    csp = _directives(response.headers["Content-Security-Policy"])
    assert csp["default-src"] == ["'none'"] and csp["frame-ancestors"] == ["'none'"]
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "no-referrer"


def test_the_receipt_fast_path_answers_with_the_headers_too(client, settings):
    """A receipt posted with its length is served by the WSGI fast path in front of the receipt app
    (portal/webhooks/app.py), not by Flask: its answers carry the same headers as the app's own."""
    body = json.dumps(event(email_id="re_no_such_message"))
    signed = client.post("/webhooks/resend", data=body.encode(), headers=sign(settings.resend_webhook_secret, body))
    unsigned = client.post("/webhooks/resend", data=body.encode())
    assert (signed.status_code, unsigned.status_code) == (200, 401)
    for answer in (signed, unsigned):
        csp = _directives(answer.headers["Content-Security-Policy"])
        assert csp["default-src"] == ["'none'"] and csp["frame-ancestors"] == ["'none'"]
        assert answer.headers["X-Frame-Options"] == "DENY"
        assert answer.headers["X-Content-Type-Options"] == "nosniff"
        assert answer.headers["Referrer-Policy"] == "no-referrer"
