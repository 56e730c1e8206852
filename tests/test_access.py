"""Every page declares who may see it, and managers stay inside their own company."""
import sqlalchemy as sa

from portal.access import PUBLIC


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


def test_manager_cannot_see_another_companys_employee(client, auth, make_user, db):
    make_user("employee", company="Other Co", email="worker@other.example")
    with db.read() as conn:
        other_id = conn.execute(sa.text("SELECT id FROM users WHERE email = 'worker@other.example'")).scalar()
    make_user("employee", company="Acme Ltd", email="worker@acme.example")
    with db.read() as conn:
        own_id = conn.execute(sa.text("SELECT id FROM users WHERE email = 'worker@acme.example'")).scalar()

    auth.login(make_user("manager", company="Acme Ltd"))
    assert client.get(f"/company/employees/{own_id}").status_code == 200
    assert client.get(f"/company/employees/{other_id}").status_code == 404
    overview = client.get("/company").get_data(as_text=True)
    assert "worker@acme.example" in overview and "worker@other.example" not in overview


def test_admin_sees_companies(client, auth, make_user):
    make_user("manager", company="Acme Ltd")
    auth.login(make_user("admin"))
    page = client.get("/", follow_redirects=True).get_data(as_text=True)
    assert "Partner companies" in page and "Acme Ltd" in page


ALLOWED_PUBLIC = {"/", "/healthz", "/login", "/invitations/accept/<token>", "/webhooks/resend", "/apply", "/apply/thanks",
                  "/demo", "/demo/thanks"}


def test_public_endpoints_are_only_the_known_few(app):
    public = {r.rule for r in app.url_map.iter_rules()
              if r.endpoint != "static" and app.view_functions[r.endpoint].access == PUBLIC}
    assert public <= ALLOWED_PUBLIC, public - ALLOWED_PUBLIC
    assert {"/", "/healthz", "/login", "/invitations/accept/<token>"} <= public


def test_the_mounted_receipt_app_declares_access_too(app):
    from portal.webhooks import create_webhook_app

    receipts = create_webhook_app(app.extensions["portal"])
    rules = {rule.rule: receipts.view_functions[rule.endpoint].access
             for rule in receipts.url_map.iter_rules() if rule.endpoint != "static"}
    assert rules == {"/resend": PUBLIC}
