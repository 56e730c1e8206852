"""Sign-in through a company's own OpenID Connect provider, in Chromium, against a real provider process."""

from playwright.sync_api import expect

from e2e.test_people import snapshot_widths
from portal.seed import DEMO_PASSWORD

ADMIN = "admin@teei.example"
OLENA = "olena@northwind.example"


def test_a_colleague_signs_in_through_the_companys_provider(
    pages, page, new_context, oidc_provider, accessibility, stack
):
    accessibility.others.add(oidc_provider.issuer)  # the provider's pages are not the portal's to audit
    # TEEI's admin sets up Northwind's provider on the company's sign-in page.
    pages.sign_in(ADMIN, DEMO_PASSWORD)
    page.get_by_role("link", name="Northwind Logistics").click()
    page.get_by_role("link", name="Sign-in with the company's identity provider").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Sign-in with your identity provider")
    page.get_by_label("Issuer URL").fill(oidc_provider.issuer)
    page.get_by_label("Client ID").fill("portal-at-northwind")
    page.get_by_label("Client secret").fill("northwind-client-secret")
    page.get_by_label("Email domains the provider vouches for").fill("northwind.example")
    page.get_by_role("button", name="Save and put in force").click()
    expect(page.get_by_role("status")).to_contain_text("Saved and in force")
    expect(page.get_by_text("In force", exact=True)).to_be_visible()
    snapshot_widths(page, "sso-settings")

    # Olena types her address; the portal sends her to the provider, where she signs in.
    oidc_provider.set_user("olena-at-northwind", email=OLENA, name="Olena")
    olena = new_context().new_page()
    olena.goto(f"{pages.base_url}/login")
    snapshot_widths(olena, "sign-in-address-first")
    olena.get_by_label("Email").fill(OLENA)
    olena.get_by_role("button", name="Continue").click()
    expect(olena.get_by_role("heading", level=1)).to_have_text("Sign in with your work account")
    snapshot_widths(olena, "sign-in-to-provider")
    olena.get_by_role("link", name="Continue to your company's sign-in").click()
    olena.wait_for_url(f"{oidc_provider.issuer}/**")
    olena.locator("input[name=sub]").fill("olena-at-northwind")
    olena.get_by_role("button", name="Authorize").click()
    expect(olena.get_by_role("heading", name="Book your first session")).to_be_visible()
    access = stack.access_log.read_text()
    assert "/login/sso/callback?code=[token]&state=[token]" in access, "the provider's code is not logged"
    assert "northwind-client-secret" not in access + (stack.logs / "web.log").read_text()

    # The sign-in is in the company's events, for TEEI's admin (and Northwind's managers).
    page.get_by_role("link", name="Sign-in and directory events").click()
    expect(page.get_by_role("row", name="Signed in through the company's provider")).to_be_visible()
    snapshot_widths(page, "sso-events")


def test_a_sign_in_declined_at_the_provider_says_so(pages, page, oidc_provider, accessibility):
    accessibility.others.add(oidc_provider.issuer)
    pages.sign_in(ADMIN, DEMO_PASSWORD)
    page.get_by_role("link", name="Northwind Logistics").click()
    page.get_by_role("link", name="Sign-in with the company's identity provider").click()
    page.get_by_label("Issuer URL").fill(oidc_provider.issuer)
    page.get_by_label("Client ID").fill("portal-at-northwind")
    page.get_by_label("Client secret").fill("northwind-client-secret")
    page.get_by_label("Email domains the provider vouches for").fill("northwind.example")
    page.get_by_role("button", name="Save and put in force").click()
    page.get_by_role("button", name="Sign out").click()

    page.get_by_label("Email").fill(OLENA)
    page.get_by_role("button", name="Continue").click()
    page.get_by_role("link", name="Continue to your company's sign-in").click()
    page.get_by_role("button", name="Deny").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Sign-in did not go through")
    expect(page.get_by_text("Nobody was signed in.")).to_be_visible()
    snapshot_widths(page, "sso-refused")
