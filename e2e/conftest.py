"""Browser tests: a real portal (gunicorn), on free ports, driven by Debian's Chromium."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from portal.seed import seed_demo
from portal.db import Database
from portal.testing import free_port, stop_process, wait_for_port

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture
def portal_env(tmp_path, database_path, redis_server):
    redis_server.client().flushall()
    return {
        **os.environ,
        "DATABASE_URL": f"sqlite+libsql:///{database_path}",
        "REDIS_URL": redis_server.url,
        "SECRET_KEY": "e2e-secret-key",
        "PORTAL_ENV": "development",
        "PORTAL_INSTANCE_PATH": str(tmp_path / "instance"),
    }


@pytest.fixture
def portal_url(portal_env, database_path):
    seed_demo(Database(portal_env["DATABASE_URL"]))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**portal_env, "PUBLIC_BASE_URL": url}
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--workers", "2", "--bind", f"127.0.0.1:{port}", "portal:create_app()"],
        env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(port, timeout=30, process=server)
        yield url
    finally:
        stop_process(server)


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, request):
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    page = context.new_page()
    yield page
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
    context.close()


class PortalPages:
    """Small page helpers so tests read as what a person does."""

    def __init__(self, page, base_url):
        self.page = page
        self.base_url = base_url

    def sign_in(self, email, password):
        self.page.goto(f"{self.base_url}/login")
        self.page.get_by_label("Email").fill(email)
        self.page.get_by_label("Password").fill(password)
        self.page.get_by_role("button", name="Sign in").click()


@pytest.fixture
def pages(page, portal_url):
    return PortalPages(page, portal_url)
