"""Builders for account tests (asking for a reset link and the link it emails: tests/conftest.py)."""

import pytest

from tests.pages import csrf_from


@pytest.fixture
def set_password(client):
    """set_password(link, password): open the reset link and submit a new password; the response."""

    def submit(link, password):
        opened = client.get(link)
        if opened.status_code != 302:
            return opened
        form_page = client.get(opened.headers["Location"])
        if form_page.status_code != 200:
            return form_page
        token = csrf_from(form_page.get_data(as_text=True))
        return client.post("/password/reset", data={"password": password, "csrf_token": token})

    return submit
