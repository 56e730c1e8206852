import json
import re

import sqlalchemy as sa

from portal.core import clock
from portal.email_families import FAMILIES
from tests.pages import csrf_from


def company_id_of(db, name):
    with db.read() as conn:
        return conn.execute(sa.text("SELECT id FROM companies WHERE name = :n"), {"n": name}).scalar_one()


def test_an_admin_sends_the_first_managers_expired_invitation_again(
    client, auth, make_user, submit, decide, db, ctx, outbox_rows
):
    application = submit()
    decide(application.application_id, "approve")
    with db.write() as conn:  # the first invitation expired unused (or its email bounced)
        conn.execute(sa.text("UPDATE invitations SET expires_at = '2020-01-01T00:00:00.000000Z'"))
        conn.execute(sa.text("UPDATE email_outbox SET status = 'delivered' WHERE family = 'application_decision'"))
    company_id = company_id_of(db, "Fjord Analytics AS")
    auth.login(make_user("admin"))
    assert f'href="/admin/companies/{company_id}"' in client.get("/admin/").get_data(as_text=True)
    page = client.get(f"/admin/companies/{company_id}").get_data(as_text=True)
    assert "ingrid@fjord.example" in page and "expired" in page and "Send again" in page
    # Each region a screen reader lists has a name of its own (axe's landmark-unique).
    headings = dict(re.findall(r'<h2 id="([^"]+)"[^>]*>([^<]+)</h2>', page))
    regions = [headings[i] for i in re.findall(r'<section[^>]*aria-labelledby="([^"]+)"', page)]
    regions += re.findall(r'role="region" aria-label="([^"]+)"', page)
    assert len(regions) == len(set(regions)), regions
    (action,) = re.findall(r'action="(/admin/companies/\d+/invitations/\d+/resend)"', page)
    response = client.post(action, data={"csrf_token": csrf_from(page)})
    assert response.status_code == 302
    assert "being sent again" in client.get(response.headers["Location"]).get_data(as_text=True)
    (row,) = outbox_rows(family="manager_invitation")
    assert row["recipient"] == "ingrid@fjord.example"
    email = FAMILIES["manager_invitation"].render(json.loads(row["template_input"]), ctx.settings, now=clock.utcnow())
    link = re.search(r"(/invitations/accept/\S+)", email.text).group(1)
    auth.logout()
    accept = client.get(link, follow_redirects=True)  # the token is exchanged for a clean URL
    assert accept.status_code == 200 and "Create your manager account" in accept.get_data(as_text=True)


def test_an_admin_invites_another_manager_for_a_company(client, auth, make_user, db, outbox_rows):
    make_user("manager", company="Acme Ltd")
    auth.login(make_user("admin"))
    company_id = company_id_of(db, "Acme Ltd")
    page = client.get(f"/admin/companies/{company_id}").get_data(as_text=True)
    response = client.post(
        f"/admin/companies/{company_id}/managers",
        data={"email": "new.boss@acme.example", "csrf_token": csrf_from(page)},
    )
    assert response.status_code == 302
    assert [row["recipient"] for row in outbox_rows(family="manager_invitation")] == ["new.boss@acme.example"]
    bad = client.post(f"/admin/companies/{company_id}/managers", data={"email": "nope", "csrf_token": csrf_from(page)})
    assert bad.status_code == 400


def test_the_company_page_is_for_admins_only(client, auth, make_user, db):
    auth.login(make_user("manager", company="Acme Ltd"))
    assert client.get(f"/admin/companies/{company_id_of(db, 'Acme Ltd')}").status_code == 403
    assert client.get("/admin/demo-requests").status_code == 403


def test_the_company_page_shows_that_the_first_managers_email_bounced(client, auth, make_user, submit, decide, db):
    application = submit()
    decide(application.application_id, "approve")
    with db.write() as conn:  # the approval email, which carried the first manager's link, bounced
        conn.execute(sa.text("UPDATE email_outbox SET status = 'bounced' WHERE family = 'application_decision'"))
    auth.login(make_user("admin"))
    page = client.get(f"/admin/companies/{company_id_of(db, 'Fjord Analytics AS')}").get_data(as_text=True)
    row = page.split("ingrid@fjord.example")[1].split("</tr>")[0]
    assert "bounced" in row and "Send again" in row
