from __future__ import annotations

import pytest
import resend

from devtools.provider_model import ProviderModel


@pytest.fixture
def model():
    """A running provider model, with the resend SDK pointed at it for the test's duration."""
    provider = ProviderModel(port=0, idempotency_window_seconds=86400)
    provider.start()
    saved = resend.api_key, resend.api_url
    resend.api_key, resend.api_url = "re_test", provider.url
    try:
        yield provider
    finally:
        resend.api_key, resend.api_url = saved
        provider.stop()


@pytest.fixture
def message():
    """Builder: message(**changes) returns a valid send payload with the changes applied."""

    def make(**changes):
        params = {
            "from": "Partner Portal <portal@localhost>",
            "to": ["ada@example.com"],
            "subject": "You are invited to volunteer",
            "html": "<p>Hello Ada</p>",
            "text": "Hello Ada",
            "tags": [{"name": "environment", "value": "test"}, {"name": "family", "value": "invitation"}],
        }
        params.update(changes)
        return params

    return make
