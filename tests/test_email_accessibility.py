"""Every email family, rendered from what a real operation stored, reads well without the HTML.

Each family's email must declare its language, carry a text part that says what the HTML says,
use links (not images or scripts) for its buttons, with text that names where they go, and give
every image a text alternative. A family added without an operation here fails the last test.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from portal.account.operations import ask_for_password_reset, send_requested_reset_links
from portal.applications.operations import record_decision, submit_application
from portal.auth.queries import load_user
from portal.campaigns import operations as campaigns
from portal.campaigns.sending import campaign_pass
from portal.core import clock
from portal.demo.operations import request_demo
from portal.email_families import FAMILIES
from portal.invitations.managers import invite_manager
from portal.invitations.operations import invite_colleagues
from portal.notices.operations import send_notice
from portal.outbox.write.intents import TEMPLATE_INPUT
from portal.report_emails.operations import test_send as send_test_report

VAGUE_LINK_TEXT = {"click here", "here", "link", "this link", "more", "read more", "open"}
# Lines of the shared layout that only the HTML carries: the brand and the footer.
LAYOUT_ONLY = ("TEEI Partner Portal", "TEEI Language and TEEI Mentorship are free programmes")


class EmailHtml(HTMLParser):
    """The parts of an email's HTML that assistive technology and text-only readers depend on."""

    def __init__(self):
        super().__init__()
        self.lang = None
        self.links: list[dict] = []
        self.images: list[dict] = []
        self.blocks: list[str] = []
        self._link = None
        self._block: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "html":
            self.lang = attrs.get("lang")
        elif tag == "a":
            self._link = {"href": attrs.get("href", ""), "text": ""}
        elif tag == "img":
            self.images.append(attrs)
        elif tag in ("h1", "h2", "h3", "p", "li"):
            self._block = []

    def handle_endtag(self, tag):
        if tag == "a" and self._link is not None:
            self.links.append(self._link)
            self._link = None
        elif tag in ("h1", "h2", "h3", "p", "li") and self._block is not None:
            self.blocks.append(" ".join("".join(self._block).split()))
            self._block = None

    def handle_data(self, data):
        if self._link is not None:
            self._link["text"] += data
        if self._block is not None:
            self._block.append(data)


def words(text: str) -> list[str]:
    """Lower-case words; dots and colons only inside one (addresses, links, times), never trailing."""
    return re.findall(r"[\w@'/-]+(?:[.:][\w@'/-]+)*", text.lower())


@pytest.fixture
def every_family_sent(ctx, make_user, user_id):
    """Run one real operation per family; return {family name: [rendered email, ...]}."""
    manager = load_user(ctx.db, user_id(make_user("manager", company="Acme Ltd")))
    admin_id = user_id(make_user("admin"))
    invite_colleagues(ctx, manager=manager, addresses=["olav@acme.example"], programme="mentorship")
    for company, email in (("Lumen Retail", "sofia@lumen.example"), ("Fjord Foods", "per@fjord.example")):
        submission = submit_application(
            ctx, company_name=company, contact_name="Contact Person", contact_email=email, employee_count=40
        )
        decision = "approve" if company == "Lumen Retail" else "decline"
        note = "" if decision == "approve" else "We are not taking new partners this quarter."
        record_decision(
            ctx, application_id=submission.application_id, decision=decision, note=note, admin_user_id=admin_id
        )
    request_demo(ctx, name="Ines Moreau", email="ines@atelier.example", company="Atelier", message="Ten people.")
    send_notice(ctx, to="someone@example.org", subject="Planned maintenance", body="Tonight.\n\nThank you.")
    send_test_report(ctx, manager=manager, request_id="a" * 32)
    ask_for_password_reset(ctx.db, email=manager.email, now=clock.utcnow())
    send_requested_reset_links(ctx, now=clock.utcnow())
    invite_manager(
        ctx, company_id=manager.company_id, email="second@acme.example", inviter_id=manager.id, inviter_name="Maja"
    )

    campaign = campaigns.create_campaign(
        ctx.db,
        admin_id=admin_id,
        name="Autumn",
        subject="Autumn at TEEI",
        body="## New sessions\n\nRead [the autumn programme](https://teei.org/autumn).\n\n- Language\n- Mentorship",
        audience=f"company:{manager.company_id}",
    )
    campaigns.send_test(ctx, campaign_id=campaign, admin=load_user(ctx.db, admin_id), request_id="b" * 32)
    campaigns.send(ctx, campaign_id=campaign, admin_id=admin_id, send_at=None)
    campaign_pass(ctx)

    rendered: dict[str, list] = {}
    with ctx.db.read() as conn:
        rows = conn.exec_driver_sql(f"SELECT id, {TEMPLATE_INPUT} FROM email_outbox").all()
    for outbox_id, template_input in rows:
        family = ctx.families.for_outbox_id(outbox_id)
        rendered.setdefault(family.name, []).append(
            family.render(json.loads(template_input), ctx.settings, now=clock.utcnow())
        )
    return rendered


def test_every_email_declares_its_language_and_names_its_links(every_family_sent):
    for family, emails in every_family_sent.items():
        for email in emails:
            html = EmailHtml()
            html.feed(email.html)
            assert html.lang == "en", family
            for link in html.links:
                text = " ".join(link["text"].split())
                assert link["href"].startswith(("http://", "https://", "mailto:")), (family, link)
                assert text and text.lower() not in VAGUE_LINK_TEXT, f"{family}: a link reads {text!r}"
            assert all(image.get("alt") is not None for image in html.images), family


def test_every_text_part_says_what_the_html_says(every_family_sent):
    for family, emails in every_family_sent.items():
        for email in emails:
            html = EmailHtml()
            html.feed(email.html)
            text_words = set(words(email.text))
            for link in html.links:
                assert link["href"] in email.text, f"{family}: the text part lacks {link['href']}"
            for block in html.blocks:
                if block.startswith(LAYOUT_ONLY) or block.startswith("Or paste this link"):
                    continue
                missing = [w for w in words(block) if w not in text_words]
                assert not missing, f"{family}: the text part lacks {missing} of {block!r}"


def test_the_checks_above_cover_every_family(every_family_sent):
    assert set(every_family_sent) == {family.name for family in FAMILIES}
