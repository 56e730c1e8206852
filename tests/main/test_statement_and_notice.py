"""Every page's footer links to the accessibility statement, the privacy notice and a contact
address (issue 47, item 10); the statement follows a public-sector statement's structure and the
notice states the retention periods the portal is configured with."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from portal import create_app


def footer(page: str) -> str:
    return re.search(r'<footer class="site-footer">.*?</footer>', page, re.S).group(0)


@pytest.mark.parametrize("role", [None, "employee", "manager", "admin"])
def test_every_page_of_every_role_links_the_statement_the_notice_and_the_contact(client, auth, make_user, role):
    if role:
        auth.login(make_user(role, company="Acme Ltd"))
    for path in ("/", "/login", "/apply", "/accessibility", "/privacy", "/no-such-page"):
        answer = client.get(path, follow_redirects=True)
        links = footer(answer.get_data(as_text=True))
        assert 'href="/accessibility">Accessibility statement</a>' in links, path
        assert 'href="/privacy">Privacy notice</a>' in links, path
        assert 'href="mailto:sales@teei.example">Contact</a>' in links, path


def test_the_statement_has_the_parts_of_an_accessibility_statement(client):
    answer = client.get("/accessibility")
    page = answer.get_data(as_text=True)
    assert answer.status_code == 200
    headings = re.findall(r"<h2 id=\"[a-z]+\">(.*?)</h2>", page)
    assert headings == [
        "Compliance status",
        "What is not accessible",
        "Reporting a problem",
        "How we tested this portal",
        "Preparation of this statement",
    ]
    assert "Web Content Accessibility Guidelines (WCAG) version 2.2, level AA" in page
    assert 'href="mailto:sales@teei.example"' in page
    assert "This statement was prepared on 7 Dec 2026. It was last reviewed on 7 Dec 2026." in page


def test_the_notice_states_the_retention_periods_as_configured(settings):
    app = create_app(settings=replace(settings, demo_request_retention_days=90, outbox_retention_days=400))
    page = app.test_client().get("/privacy").get_data(as_text=True)
    assert "Demo requests (name, address, company, message): after 90 days" in page
    assert "Emails' recipients and contents, once settled: after 400 days" in page
    assert "Invitations never accepted (the invited address): after 180 days" in page
    assert "no analytics or advertising cookies" in page
