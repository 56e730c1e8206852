"""Browser tests: a real portal (gunicorn), on free ports, driven by Debian's Chromium."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from devtools.processes import free_port, stop_process, wait_for_port
from devtools.testing import wait_until
from e2e.accessibility import AccessibilityAudit
from portal.core.db import Database
from portal.core.settings import DEV_WEBHOOK_SECRET
from portal.seed import seed_demo

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
SECRET_KEY = "e2e-secret-key"


@pytest.fixture
def portal_env(tmp_path, database_url, redis_server):
    redis_server.client().flushall()
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_server.url,
        "SECRET_KEY": SECRET_KEY,
        "PORTAL_ENV": "development",
        "PORTAL_INSTANCE_PATH": str(tmp_path / "instance"),
    }


def answering(url: str) -> bool:
    """The portal answers its health check."""
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=30) as answer:
            return answer.status == 200
    except OSError:
        return False


class PortalStack:
    """A running portal: gunicorn, one email worker and the provider model, on free ports."""

    def __init__(self, url, model, database_url, logs: Path, secret_key: str = SECRET_KEY):
        self.url = url
        self.secret_key = secret_key
        self.model = model
        self.db = Database(database_url)
        self.logs = logs  # web.log, access.log (gunicorn's access log) and worker.log
        self.access_log = logs / "access.log"


@contextmanager
def running_stack(portal_env, logs: Path, *, log_format: str = "text", app: str | None = None):
    """Start the stack as production runs it: gunicorn with gunicorn.conf.py (its logger, masking
    tokens and addresses), a worker, and the provider model posting its receipts back. Every log is
    kept in `logs`, for the test to read and for a person to read when a test fails. `app` names
    another app factory for gunicorn (the pseudo-translation, devtools/pseudo.py)."""
    from devtools.provider_model import ProviderModel

    # As under make run, the people without their sessions: a test adds the hours it checks.
    seed_demo(Database(portal_env["DATABASE_URL"]), secret_key=portal_env["SECRET_KEY"], attendance=False)
    logs.mkdir(parents=True, exist_ok=True)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    model = ProviderModel(port=0, webhook_url=f"{url}/webhooks/resend", webhook_secret=DEV_WEBHOOK_SECRET).start()
    env = {
        **portal_env,
        "PUBLIC_BASE_URL": url,
        "RESEND_API_URL": model.url,
        "RELAY_INTERVAL_SECONDS": "1",
        "OUTBOX_REPUBLISH_AFTER_SECONDS": "2",
        "OUTBOX_RETRY_BASE_SECONDS": "1",
        "LOG_FORMAT": log_format,
        "PROMETHEUS_MULTIPROC_DIR": str(logs.parent / "metrics"),
    }
    gunicorn = [sys.executable, "-m", "gunicorn", "--config", str(ROOT / "gunicorn.conf.py")]
    gunicorn += ["--workers", "2", "--bind", f"127.0.0.1:{port}", "--access-logfile", str(logs / "access.log")]
    gunicorn += [app] if app else []
    outputs = [open(logs / "web.log", "wb"), open(logs / "worker.log", "wb")]
    processes = [
        subprocess.Popen(gunicorn, env=env, cwd=ROOT, stdout=outputs[0], stderr=subprocess.STDOUT),
        subprocess.Popen([sys.executable, "worker.py"], env=env, cwd=ROOT, stdout=outputs[1], stderr=subprocess.STDOUT),
    ]
    try:
        wait_for_port(port, timeout=30, process=processes[0])
        # The port opens before gunicorn's workers have imported the portal: on a machine others
        # share, that can take longer than a page's timeout. Ready when a page answers.
        assert wait_until(lambda: answering(url), timeout=180), "the portal's web workers never answered"
        yield PortalStack(url, model, portal_env["DATABASE_URL"], logs, portal_env["SECRET_KEY"])
    finally:
        for process in processes:
            stop_process(process)
        for output in outputs:
            output.close()
        model.stop()


@pytest.fixture
def stack(portal_env, tmp_path):
    with running_stack(portal_env, tmp_path / "logs") as running:
        yield running


@pytest.fixture
def portal_url(stack):
    return stack.url


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


AUDIT = pytest.StashKey[AccessibilityAudit]()


@pytest.fixture(scope="session")
def accessibility(request):
    audit = AccessibilityAudit()
    request.config.stash[AUDIT] = audit
    return audit


@pytest.fixture
def new_context(browser, accessibility):
    """new_context(): a fresh browser context (another person), whose pages axe audits too."""
    contexts = []

    def make(**options):
        context = browser.new_context(**{"viewport": {"width": 1100, "height": 800}, **options})
        accessibility.watch(context)
        contexts.append(context)
        return context

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def page(browser, new_context, accessibility, request):
    page = new_context().new_page()
    yield page
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
    blocking = accessibility.audit_pending(browser)
    assert not blocking, "axe found serious or critical problems:\n" + "\n".join(f.describe() for f in blocking)


def pytest_terminal_summary(terminalreporter, config):
    audit = config.stash.get(AUDIT, None)
    if audit is None or not audit.audited:
        return
    terminalreporter.section("accessibility (axe-core)")
    terminalreporter.write_line(
        f"{len(audit.audited)} distinct pages audited at 1280 and 390 px, on these paths: "
        + ", ".join(sorted(audit.paths))
    )
    for finding in sorted(set(audit.lesser), key=lambda f: (f.rule, f.path, f.width)):
        terminalreporter.write_line("  " + finding.describe())


class PortalPages:
    """Small page helpers so tests read as what a person does."""

    def __init__(self, page, stack):
        self.page = page
        self.stack = stack
        self.base_url = stack.url

    def wait_for_email(self, to, subject_contains="", timeout=30.0):
        """The email the provider model accepted for this address, once the worker has sent it."""
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for email in self.stack.model.sent():
                if to in email["to"] and subject_contains in email["subject"]:
                    return email
            time.sleep(0.2)
        raise AssertionError(f"no email to {to!r} with {subject_contains!r} within {timeout}s")

    def sign_in(self, email, password):
        self.page.goto(f"{self.base_url}/login")
        self.page.get_by_label("Email").fill(email)
        # Address first; right after a password reset the page starts at the password, address filled in.
        if self.page.get_by_role("button", name="Continue").count():
            self.page.get_by_role("button", name="Continue").click()
        self.page.get_by_label("Password").fill(password)
        self.page.get_by_role("button", name="Sign in").click()


@pytest.fixture
def pages(page, stack):
    return PortalPages(page, stack)
