"""The invitations page's CSV import in Chromium: Excel's file in, what it will do shown, then invitations out."""

from pathlib import Path

from playwright.sync_api import expect

from e2e.test_people import snapshot_widths
from portal.seed import DEMO_PASSWORD

MANAGER = "manager@northwind.example"
EXCEL = (
    "\ufeffNavn;E-post;Avdeling\r\n"
    "Ana Alves;ana@northwind.example;Warehouse operations\r\n"
    "Ben Berg;ben@northwind.example;Finance\r\n"
    "Olena Kovalenko;olena@northwind.example;Customer service\r\n"
    "Typo;cai@northwind;Finance\r\n"
)


def test_a_manager_imports_colleagues_from_an_excel_csv(pages, page, tmp_path: Path):
    file = tmp_path / "colleagues.csv"
    file.write_bytes(EXCEL.encode("utf-8"))
    pages.sign_in(MANAGER, DEMO_PASSWORD)
    page.get_by_role("link", name="Invitations").click()
    page.get_by_role("link", name="Import a CSV file").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Import colleagues from a CSV file")
    snapshot_widths(page, "invitations-import")
    page.get_by_label("CSV file of colleagues").set_input_files(str(file))
    page.get_by_label("TEEI Mentorship").check()
    page.get_by_role("button", name="Show what the import will do").click()

    expect(page.get_by_role("heading", level=1)).to_have_text("What the import will do")
    expect(page.get_by_text("2 colleagues will be invited to TEEI Mentorship")).to_be_visible()
    expect(page.get_by_text("Line 5: “cai@northwind” is not a valid email address.")).to_be_visible()
    expect(page.get_by_role("row", name="olena@northwind.example")).to_contain_text("Has an account: nothing sent")
    snapshot_widths(page, "invitations-import-preview")

    page.get_by_role("button", name="Invite 2 colleagues").click()
    expect(page.get_by_role("status")).to_contain_text("Invited 2 colleagues")
    pages.wait_for_email("ben@northwind.example", "invites you to volunteer")
