"""Builders for account tests: asking for a reset link, and the link the email would carry."""

import json

import pytest

from portal.account.operations import send_requested_reset_links
from portal.account.tokens import token_for
from portal.core import clock
from tests.pages import csrf_from


@pytest.fixture
def ask_reset(client, ctx):
    """ask_reset(email): submit the forgot-password form as a visitor, then run the worker's pass
    that sends the link; returns the form's response."""

    def ask(email):
        token = csrf_from(client.get("/password/forgot").get_data(as_text=True))
        answer = client.post("/password/forgot", data={"email": email, "csrf_token": token})
        send_requested_reset_links(ctx, now=clock.utcnow())
        return answer

    return ask


@pytest.fixture
def reset_links(outbox_rows, ctx):
    """reset_links(email): the reset links emailed to that address, oldest first, as the worker renders them."""

    def links(email):
        return [
            f"/password/reset/{token_for(ctx.settings.secret_key, json.loads(row['template_input'])['token_nonce'])}"
            for row in outbox_rows(family="password_reset", recipient=email)
        ]

    return links


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
