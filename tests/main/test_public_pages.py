"""The home page a signed-out visitor sees, and the unsubscribe page a campaign email opens."""

from portal.campaigns import operations as campaigns
from portal.campaigns.tokens import token_for


def test_a_visitor_gets_the_home_page_with_each_way_in(client):
    response = client.get("/")
    page = response.get_data(as_text=True)

    assert response.status_code == 200
    assert "Your colleagues volunteer. TEEI counts the hours." in page
    assert "TEEI Language and TEEI Mentorship" in page
    for path, words in (("/login", "Go to sign in"), ("/apply", "Apply to join"), ("/demo", "Ask for a demo")):
        assert f'href="{path}">{words}</a>' in page


def test_people_signed_in_still_land_where_they_did(client, auth, make_user):
    auth.login(make_user("admin"))
    response = client.get("/")
    assert response.status_code == 302 and response.headers["Location"] == "/admin/"


def test_the_unsubscribe_page_names_the_address_and_hides_the_menu(client, ctx, make_user, user_id, settings):
    admin_id = user_id(make_user("admin"))
    person = make_user("manager", company="Acme Ltd")
    campaign = campaigns.create_campaign(
        ctx.db, admin_id=admin_id, name="Autumn", subject="Autumn", body="News.", audience="all_managers"
    )
    path = f"/unsubscribe/{token_for(settings.secret_key, user_id(person), campaign)}"

    page = client.get(path).get_data(as_text=True)
    assert f'about its programmes to <strong class="address">{person}</strong>.' in page
    assert "<nav" not in page and 'href="/apply"' not in page
    after = client.post(path, data={"List-Unsubscribe": "One-Click"}).get_data(as_text=True)
    assert f'no more emails about Programme news at <strong class="address">{person}</strong>' in after
    assert "<nav" not in after
    unknown = client.get("/unsubscribe/not-a-token")
    assert unknown.status_code == 404 and "<nav" not in unknown.get_data(as_text=True)
