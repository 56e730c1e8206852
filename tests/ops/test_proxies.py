"""Behind TRUSTED_PROXY_COUNT proxies, rate limits key on the real client, not on the proxy."""

from __future__ import annotations

import re

import pytest

from portal import create_app
from portal.web.extensions import EXTENSION_KEY

PROXY = "10.0.0.7"  # what the portal sees as the peer when a proxy is in front


@pytest.fixture
def client_behind(settings):
    apps = []

    def build(proxies: int):
        app = create_app({"TESTING": True}, settings=settings.with_overrides(trusted_proxy_count=proxies))
        apps.append(app)
        return app.test_client()

    yield build
    for app in apps:
        app.extensions[EXTENSION_KEY].db.dispose()


def ask_reset(client, forwarded_for: str) -> int:
    """POST /password/forgot as a browser at `forwarded_for` does, through the proxy."""
    headers = {"X-Forwarded-For": forwarded_for}
    environ = {"REMOTE_ADDR": PROXY}
    page = client.get("/password/forgot", headers=headers, environ_base=environ).get_data(as_text=True)
    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page).group(1)
    answer = client.post(
        "/password/forgot",
        data={"email": "someone@example.org", "csrf_token": token},
        headers=headers,
        environ_base=environ,
    )
    return answer.status_code


def test_one_client_at_its_limit_does_not_stop_another_behind_the_same_proxy(client_behind):
    client = client_behind(1)
    # The proxy appends the address it saw; anything before it is the client's own say.
    assert [ask_reset(client, "198.51.100.9, 203.0.113.5") for _ in range(6)] == [302] * 5 + [429]
    assert ask_reset(client, "203.0.113.6") == 302
    # A client that writes its own X-Forwarded-For entry in front gains nothing.
    assert ask_reset(client, "192.0.2.1, 203.0.113.5") == 429


def test_without_trusted_proxies_every_client_is_the_proxy(client_behind):
    client = client_behind(0)
    assert [ask_reset(client, f"203.0.113.{n}") for n in range(6)] == [302] * 5 + [429]


def test_forms_still_post_behind_a_tls_proxy(client_behind):
    """The proxy says https; were the portal to believe it, Flask-WTF would demand a Referer on
    every POST, which the portal's own Referrer-Policy keeps browsers from sending."""
    client = client_behind(1)
    environ = {"REMOTE_ADDR": PROXY}
    headers = {"X-Forwarded-For": "203.0.113.5", "X-Forwarded-Proto": "https"}
    page = client.get("/password/forgot", headers=headers, environ_base=environ).get_data(as_text=True)
    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page).group(1)
    data = {"email": "someone@example.org", "csrf_token": token}
    answer = client.post("/password/forgot", data=data, headers=headers, environ_base=environ)
    assert answer.status_code == 302


def test_forms_post_through_gunicorn_behind_a_local_tls_proxy(deployment):
    """gunicorn as configured trusts no proxy header itself (by default it takes X-Forwarded-Proto
    from 127.0.0.1, which would make the same POST a 400)."""
    import requests

    deployment.env["TRUSTED_PROXY_COUNT"] = "1"
    base = deployment.web(workers=1)
    browser = requests.Session()
    headers = {"X-Forwarded-For": "203.0.113.5", "X-Forwarded-Proto": "https"}
    page = browser.get(f"{base}/password/forgot", headers=headers).text
    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page).group(1)
    data = {"email": "someone@example.org", "csrf_token": token}
    answer = browser.post(f"{base}/password/forgot", data=data, headers=headers, allow_redirects=False)
    assert answer.status_code == 302, answer.text[:300]
