"""The sign-in page lists the demo logins in development only (README, "First five minutes")."""

import pytest

from portal import create_app
from portal.seed import seed_demo
from portal.web.extensions import EXTENSION_KEY


def test_development_lists_demo_logins_that_really_sign_in(app, client, auth, db, settings):
    seed_demo(db, secret_key=settings.secret_key, attendance=False)
    page = client.get("/login").get_data(as_text=True)
    assert "Demo logins (development only)" in page
    logins = app.config["DEMO_LOGINS"]
    assert "<dt>Admin (TEEI)</dt>" in page and "<dt>Manager (Northwind Logistics)</dt>" in page
    assert "<dt>Volunteer (Olena Kovalenko)</dt>" in page
    for who, _values, email, password in logins:
        assert email in page and password in page
        response = auth.login(email, password)
        assert response.status_code == 302, who  # the seeded account really has that password
        auth.logout()


@pytest.mark.parametrize("environment", ["staging", "production"])
def test_staging_and_production_never_show_them(settings, environment):
    app = create_app({"TESTING": True}, settings=settings.with_overrides(portal_env=environment))
    try:
        page = app.test_client().get("/login").get_data(as_text=True)
        assert "Sign in" in page
        assert "Demo logins" not in page and "demo-password" not in page and "@northwind.example" not in page
    finally:
        app.extensions[EXTENSION_KEY].db.dispose()
