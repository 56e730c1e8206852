"""People's data in a real browser: an admin downloads and erases a volunteer; a volunteer downloads their own."""

import io
import json
import zipfile

from playwright.sync_api import expect

from e2e.test_people import snapshot_widths
from portal.seed import DEMO_PASSWORD

ADMIN = "admin@teei.example"
OLENA = "olena@northwind.example"


def test_an_admin_downloads_then_erases_a_volunteer(pages, page):
    pages.sign_in(ADMIN, DEMO_PASSWORD)
    page.get_by_role("link", name="Privacy", exact=True).click()  # the menu's, not the footer's notice
    page.get_by_label("Email address").fill(OLENA)
    page.get_by_role("button", name="Find").click()
    expect(page.get_by_role("heading", name=OLENA)).to_be_visible()
    snapshot_widths(page, "privacy-found")

    with page.expect_download() as download:
        page.get_by_role("button", name="Download everything (ZIP)").click()
    archive = zipfile.ZipFile(io.BytesIO(open(download.value.path(), "rb").read()))
    assert json.loads(archive.read("account.json"))[0]["email"] == OLENA

    page.get_by_role("button", name="Erase…").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Erase {OLENA}?")
    snapshot_widths(page, "privacy-confirm-erase")
    page.get_by_role("button", name=f"Erase {OLENA}").click()
    expect(page.get_by_role("status")).to_contain_text("Erased.")

    page.get_by_label("Email address").fill(OLENA)
    page.get_by_role("button", name="Find").click()
    expect(page.get_by_text("The portal holds nothing under this address.")).to_be_visible()
    snapshot_widths(page, "privacy-after-erasure")


def test_a_volunteer_downloads_their_data_and_can_erase_their_account(pages, page):
    pages.sign_in(OLENA, DEMO_PASSWORD)
    page.goto(f"{pages.base_url}/account")
    snapshot_widths(page, "account-your-data")
    with page.expect_download() as download:
        page.get_by_role("button", name="Download my data").click()
    assert "README.txt" in zipfile.ZipFile(download.value.path()).namelist()

    page.get_by_role("link", name="Erase my account").click()
    page.get_by_label("Your password").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Erase my account").click()
    expect(page.get_by_text("Tick the box to confirm.").first).to_be_visible()
    page.get_by_label("I understand").check()
    page.get_by_label("Your password").fill(DEMO_PASSWORD)
    snapshot_widths(page, "account-erase")
    page.get_by_role("button", name="Erase my account").click()
    expect(page.get_by_role("status")).to_contain_text("Your account is erased")
    pages.sign_in(OLENA, DEMO_PASSWORD)
    expect(page.get_by_role("alert")).to_contain_text("Wrong email or password")
