"""While Redis is away, people still sign in and work; guessing stays slowed; nothing is lost."""

import time

import requests
from playwright.sync_api import expect

from devtools.testing import PrivateRedis
from e2e.conftest import running_stack
from portal.auth import throttle
from portal.core import clock
from portal.seed import DEMO_PASSWORD
from tests.pages import csrf_from

MANAGER = "manager@northwind.example"
COLLEAGUE = "during-the-outage@northwind.example"


def _wrong_password(session: requests.Session, url: str) -> int:
    token = csrf_from(session.get(f"{url}/login").text)
    answer = session.post(f"{url}/login", data={"csrf_token": token, "email": MANAGER, "password": "not-it-at-all"})
    return answer.status_code


def test_sign_in_and_an_invitation_during_a_redis_outage(portal_env, tmp_path, page):
    redis = PrivateRedis().start()
    try:
        with running_stack({**portal_env, "REDIS_URL": redis.url}, tmp_path / "logs") as stack:
            redis.halt()

            page.goto(f"{stack.url}/login")
            page.get_by_label("Email").fill(MANAGER)
            page.get_by_role("button", name="Continue").click()
            page.get_by_label("Password").fill(DEMO_PASSWORD)
            page.get_by_role("button", name="Sign in").click()
            expect(page.get_by_role("heading", level=1)).to_have_text("Volunteering report")
            page.goto(f"{stack.url}/invitations/new")
            page.get_by_label("Email addresses").fill(COLLEAGUE)
            page.get_by_label("TEEI Language").check()
            page.get_by_role("button", name="Send invitations").click()
            expect(page.get_by_role("status")).to_contain_text("Invited 1 colleague")

            # A guesser on one client: each failure is counted in the database (the slow-down), and
            # the per-client limit counts in each web process's memory (two processes here).
            guesser = requests.Session()
            statuses = [_wrong_password(guesser, stack.url) for _ in range(11)]
            assert 429 in statuses and statuses[:5] == [401] * 5
            failures = throttle.recent_failures(stack.db, MANAGER, now=clock.utcnow())
            assert failures == statuses.count(401) and throttle.delay_after(failures) > 0

            redis.start()  # back, empty: the relay republishes what was committed meanwhile
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not _sent_to(stack, COLLEAGUE):
                time.sleep(0.5)
            time.sleep(3)  # a few relay passes more: none of them may send it again
            assert len(_sent_to(stack, COLLEAGUE)) == 1
    finally:
        redis.stop()


def _sent_to(stack, address):
    return [email for email in stack.model.sent() if address in email["to"]]
