"""SCIM tokens: made by `flask scim token`, shown once, stored hashed, revocable; and the audit list."""

from __future__ import annotations

import sqlalchemy as sa

from tests.scim.test_users import PATCH, new_user


def test_the_token_command_prints_a_working_token_on_its_last_line(runner, make_user, directory, db, company_id):
    make_user("manager", company="Acme Ltd")
    made = runner.invoke(args=["scim", "token", "--company", "acme ltd"])
    assert made.exit_code == 0, made.output
    token = made.output.strip().splitlines()[-1]
    assert directory(token).get("/Users").status_code == 200

    with db.read() as conn:
        stored = conn.execute(sa.text("SELECT token_hash FROM scim_tokens")).scalars().all()
    assert len(stored) == 1 and token not in stored[0], "stored hashed, never as given"

    assert runner.invoke(args=["scim", "token", "--company", "Nobody Inc"]).exit_code != 0
    revoked = runner.invoke(args=["scim", "revoke", "--company", "Acme Ltd"])
    assert "revoked 1 token(s)" in revoked.output
    assert directory(token).get("/Users").status_code == 401


def test_reactivating_through_scim_lets_them_back_in(scim_company, directory, db, auth):
    _company, token = scim_company()
    scim = directory(token)
    user = scim.post("/Users", json=new_user("ada@acme.example")).json()

    def active(value):
        operation = {"op": "replace", "value": {"active": value}}  # as Okta sends it
        return scim.patch(f"/Users/{user['id']}", json={"schemas": [PATCH], "Operations": [operation]})

    assert active(False).json()["active"] is False
    back = active(True)
    assert back.status_code == 200 and back.json()["active"] is True
    with db.read() as conn:
        deactivated_at, memberships, open_memberships = conn.execute(
            sa.text(
                "SELECT u.deactivated_at, COUNT(m.user_id), SUM(m.ended_at IS NULL) FROM users u "
                "JOIN company_memberships m ON m.user_id = u.id WHERE u.email = 'ada@acme.example'"
            )
        ).one()
    assert (deactivated_at, memberships, open_memberships) == (None, 2, 1), "a new membership from now"


def test_every_scim_change_and_token_event_is_in_the_companys_events(scim_company, directory, client, auth, db):
    company, token = scim_company()
    scim = directory(token)
    user = scim.post("/Users", json=new_user("ada@acme.example")).json()
    scim.put(f"/Users/{user['id']}", json=new_user("ada@acme.example", active=False))
    scim.delete(f"/Users/{user['id']}")

    with db.read() as conn:
        events = (
            conn.execute(
                sa.text(
                    "SELECT event FROM identity_events WHERE company_id = :c AND event NOT LIKE 'settings%' ORDER BY id"
                ),
                {"c": company},
            )
            .scalars()
            .all()
        )
    assert events == ["token_created", "scim_created", "scim_updated", "scim_deactivated"]
    auth.login("boss@acme.example")
    page = client.get("/company/sign-in/events").get_data(as_text=True)
    assert "Deactivated by the directory (SCIM)" in page and "Directory token created" in page


def test_requests_beyond_the_limit_are_refused_per_token(scim_company, directory, monkeypatch):
    from limits import RateLimitItemPerMinute

    from portal.scim import routes

    monkeypatch.setattr(routes, "_LIMIT", RateLimitItemPerMinute(3))  # the limit, small enough to reach
    _acme, acme_token = scim_company("Acme Ltd", "acme.example")
    _other, other_token = scim_company("Other Co", "other.example")
    acme = directory(acme_token)

    assert [acme.get("/Users").status_code for _ in range(4)] == [200, 200, 200, 429]
    refused = acme.get("/Users")
    assert (
        refused.json()["detail"] == "More than 3 requests a minute with this token." and refused.headers["Retry-After"]
    )
    assert directory(other_token).get("/Users").status_code == 200, "another company's token has its own count"
