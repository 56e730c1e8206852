"""Every page declares who may see it, and managers stay inside their own company."""

import pytest

from portal.web.access import PUBLIC
from portal.webhooks.app import MOUNT_POINT, create_webhook_app


def test_every_endpoint_declares_access(app):
    undeclared = [
        rule.endpoint
        for rule in app.url_map.iter_rules()
        if rule.endpoint != "static" and getattr(app.view_functions[rule.endpoint], "access", None) is None
    ]
    assert undeclared == []


def test_admin_pages_are_admin_only(app):
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith("/admin"):
            assert app.view_functions[rule.endpoint].access == ("admin",), rule.rule


def test_undeclared_endpoint_is_refused(app, client):
    app.add_url_rule("/forgotten", "forgotten", lambda: "secret")
    assert client.get("/forgotten").status_code == 403


def test_manager_cannot_reach_admin_pages(client, auth, make_user):
    auth.login(make_user("manager"))
    assert client.get("/admin/").status_code == 403


def test_manager_cannot_see_another_companys_employee(client, auth, make_user, user_id):
    other_id = user_id(make_user("employee", company="Other Co", email="worker@other.example"))
    own_id = user_id(make_user("employee", company="Acme Ltd", email="worker@acme.example"))

    auth.login(make_user("manager", company="Acme Ltd"))
    assert client.get(f"/reports/volunteers/{own_id}").status_code == 200
    assert client.get(f"/reports/volunteers/{other_id}").status_code == 404
    # The old address of the page redirects to the new one, which applies the same check.
    assert client.get(f"/company/employees/{other_id}", follow_redirects=True).status_code == 404


def test_admin_sees_companies(client, auth, make_user):
    make_user("manager", company="Acme Ltd")
    auth.login(make_user("admin"))
    page = client.get("/", follow_redirects=True).get_data(as_text=True)
    assert "Partner companies" in page and "Acme Ltd" in page


ALLOWED_PUBLIC = {
    "/",
    "/healthz",
    "/readyz",
    "/language",
    "/metrics",
    "/login",
    "/login/sso",  # to the provider of an address's domain
    "/login/sso/callback",  # the provider's answer: the state kept in this browser is the authority
    "/invitations/accept/<token>",
    "/invitations/accept",
    "/apply",
    "/apply/thanks",
    "/demo",
    "/demo/thanks",
    "/password/forgot",
    "/password/reset",
    "/password/reset/<token>",
    "/unsubscribe/<token>",  # GET and the RFC 8058 one-click POST: the signed token is the authority
    "/unsubscribe/<token>/preferences",
    "/verify/<report_id>",  # a filed report's ID, company, period and masked totals: what its PDF states anyway
    "/accessibility",  # the accessibility statement, linked from every page's footer
    "/privacy",  # the privacy notice, linked from every page's footer
}


def test_public_endpoints_are_only_the_known_few(app):
    public = {
        r.rule
        for r in app.url_map.iter_rules()
        if r.endpoint != "static" and app.view_functions[r.endpoint].access == PUBLIC
    }
    assert public <= ALLOWED_PUBLIC, public - ALLOWED_PUBLIC
    assert {"/", "/healthz", "/login", "/invitations/accept/<token>"} <= public


# --- the receipt app, mounted at /webhooks: its own URL map and its own access check -------------


@pytest.fixture
def receipt_app(ctx):
    """The receipt app as the factory mounts it, on the test's context."""
    return create_webhook_app(ctx, testing=True)


def test_the_receipt_app_serves_only_the_signed_receipt_endpoint(app, receipt_app):
    rules = {
        (MOUNT_POINT + rule.rule, receipt_app.view_functions[rule.endpoint].access)
        for rule in receipt_app.url_map.iter_rules()
        if rule.endpoint != "static"
    }
    assert rules == {("/webhooks/resend", PUBLIC)}
    assert not any(r.rule.startswith(MOUNT_POINT) for r in app.url_map.iter_rules()), "mounted, not registered"


def test_the_receipt_app_refuses_an_undeclared_endpoint(receipt_app):
    receipt_app.add_url_rule("/forgotten", "forgotten", lambda: "secret", methods=["GET", "POST"])
    client = receipt_app.test_client()
    assert client.get("/forgotten").status_code == 403
    assert client.post("/forgotten").status_code == 403


def test_the_portal_does_not_answer_for_the_receipt_app(client):
    assert client.get("/webhooks/forgotten").status_code == 404
    assert client.get("/webhooks/resend").status_code == 405
