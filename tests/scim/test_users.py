"""SCIM 2.0 Users at /scim/v2, over HTTP, as Entra ID and Okta call them."""

from __future__ import annotations

import sqlalchemy as sa

ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
USER = "urn:ietf:params:scim:schemas:core:2.0:User"
PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp"


def new_user(email, **extra):
    return {
        "schemas": [USER, ENTERPRISE],
        "userName": email,
        "name": {"givenName": "Ada", "familyName": "Lovelace"},
        "active": True,
        "emails": [{"value": email, "type": "work", "primary": True}],
        ENTERPRISE: {"department": "Engineering", "employeeNumber": "E-17"},
        **extra,
    }


def account(db, email):
    with db.read() as conn:
        return (
            conn.execute(
                sa.text(
                    "SELECT name, role, programme, department, employee_number, deactivated_at, company_id "
                    "FROM users WHERE email = :e"
                ),
                {"e": email},
            )
            .mappings()
            .first()
        )


def test_creating_a_user_provisions_a_volunteer_of_the_company(scim_company, directory, db):
    company, token = scim_company()
    scim = directory(token)

    created = scim.post("/Users", json=new_user("Ada@Acme.example", externalId="entra-1"))

    assert created.status_code == 201, created.text
    body = created.json()
    assert body["userName"] == "ada@acme.example" and body["active"] is True
    assert body[ENTERPRISE] == {"department": "Engineering", "employeeNumber": "E-17"}
    assert created.headers["Location"].endswith(f"/scim/v2/Users/{body['id']}")
    stored = account(db, "ada@acme.example")
    assert (stored["name"], stored["role"], stored["programme"], stored["department"]) == (
        "Ada Lovelace",
        "employee",
        "language",
        "Engineering",
    )
    assert stored["company_id"] == company
    again = scim.post("/Users", json=new_user("ada@acme.example"))
    assert again.status_code == 409 and again.json()["scimType"] == "uniqueness"


def test_filter_by_user_name_and_paging(scim_company, directory):
    _company, token = scim_company()
    scim = directory(token)
    for n in range(5):
        assert scim.post("/Users", json=new_user(f"p{n}@acme.example")).status_code == 201

    found = scim.get("/Users", params={"filter": 'userName eq "P3@acme.example"'}).json()
    assert found["totalResults"] == 1 and found["Resources"][0]["userName"] == "p3@acme.example"
    assert scim.get("/Users", params={"filter": 'userName eq "nobody@acme.example"'}).json()["totalResults"] == 0

    page = scim.get("/Users", params={"startIndex": 3, "count": 2}).json()
    assert (page["totalResults"], page["startIndex"], page["itemsPerPage"]) == (6, 3, 2)  # the manager too
    names = [user["userName"] for user in page["Resources"]]
    assert names == ["p1@acme.example", "p2@acme.example"]
    bad = scim.get("/Users", params={"filter": 'displayName co "x"'})
    assert bad.status_code == 400 and bad.json()["scimType"] == "invalidFilter"


def test_a_companys_token_never_reaches_another_companys_people(scim_company, directory, user_id):
    _acme, acme_token = scim_company("Acme Ltd", "acme.example")
    _other, other_token = scim_company("Other Co", "other.example")
    other_user = directory(other_token).post("/Users", json=new_user("olga@other.example")).json()

    acme = directory(acme_token)
    assert acme.get(f"/Users/{other_user['id']}").status_code == 404
    assert (
        acme.patch(
            f"/Users/{other_user['id']}",
            json={"schemas": [PATCH], "Operations": [{"op": "replace", "path": "active", "value": False}]},
        ).status_code
        == 404
    )
    assert acme.delete(f"/Users/{other_user['id']}").status_code == 404
    listed = acme.get("/Users", params={"filter": 'userName eq "olga@other.example"'}).json()
    assert listed["totalResults"] == 0
    assert all(u["userName"].endswith("@acme.example") for u in acme.get("/Users").json()["Resources"])


def test_without_a_valid_token_nothing_is_served(scim_company, directory, live_portal, ctx):
    _company, token = scim_company()
    assert directory("scim_not-a-token").get("/Users").status_code == 401
    answer = directory(None).get("/ServiceProviderConfig")
    assert answer.status_code == 401 and answer.json()["schemas"] == ["urn:ietf:params:scim:api:messages:2.0:Error"]

    from portal.core import clock
    from portal.scim import revoke_tokens

    assert directory(token).get("/Users").status_code == 200
    revoke_tokens(ctx.db, company_id=_company, acting_user_id=None, now=clock.utcnow())
    assert directory(token).get("/Users").status_code == 401, "a revoked token stops at once"


def test_entra_and_okta_patches_update_and_deactivate(scim_company, directory, db):
    _company, token = scim_company()
    scim = directory(token)
    user = scim.post("/Users", json=new_user("ada@acme.example")).json()

    # Okta: a value object without a path; Entra: a path into the enterprise extension.
    okta = scim.patch(
        f"/Users/{user['id']}",
        json={"schemas": [PATCH], "Operations": [{"op": "replace", "value": {"displayName": "Ada L."}}]},
    )
    assert okta.status_code == 200, okta.text
    entra = scim.patch(
        f"/Users/{user['id']}",
        json={
            "schemas": [PATCH],
            "Operations": [{"op": "Replace", "path": f"{ENTERPRISE}:department", "value": "Research"}],
        },
    )
    assert entra.status_code == 200 and entra.json()[ENTERPRISE]["department"] == "Research"
    assert account(db, "ada@acme.example")["department"] == "Research"

    # Entra sends active as the text "False".
    off = scim.patch(
        f"/Users/{user['id']}",
        json={"schemas": [PATCH], "Operations": [{"op": "Replace", "path": "active", "value": "False"}]},
    )
    assert off.status_code == 200 and off.json()["active"] is False
    assert account(db, "ada@acme.example")["deactivated_at"] is not None


def test_delete_deactivates_and_the_user_is_gone_for_the_directory(scim_company, directory, db):
    _company, token = scim_company()
    scim = directory(token)
    user = scim.post("/Users", json=new_user("ada@acme.example")).json()

    assert scim.delete(f"/Users/{user['id']}").status_code == 204
    assert scim.get(f"/Users/{user['id']}").status_code == 404
    assert account(db, "ada@acme.example")["deactivated_at"] is not None, "deactivated as the People page does"
