"""axe-core over every page the browser tests see, at a desktop and a phone width.

Each HTML document a watched browser context receives is kept as it arrived, and audited after
the test in a page of its own: the test's timing is left alone, and a page seen once (a token's
landing page, a form's error answer) is audited as the person saw it. The axe script comes from
the `axe-playwright-python` wheel, so a fresh machine gets it from `make test`'s install.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Error as PlaywrightError

WIDTHS = (1280, 390)
BLOCKING_IMPACTS = ("serious", "critical")


def _without_tokens(path: str) -> str:
    """The path as the summary prints it: a token in it (an invitation link) reads <token>."""
    return "/".join("<token>" if len(part) > 20 else part for part in path.split("/"))


@dataclass(frozen=True)
class Finding:
    rule: str
    impact: str
    path: str
    width: int
    targets: tuple[str, ...]
    help: str

    def describe(self) -> str:
        where = ", ".join(self.targets[:3]) + (" …" if len(self.targets) > 3 else "")
        return f"{self.impact:8} {self.rule} on {self.path} at {self.width}px: {self.help} [{where}]"


@dataclass
class AccessibilityAudit:
    """Collects documents from watched contexts; `audit_pending` runs axe over the new ones."""

    base_url: str = ""
    axe: Axe = field(default_factory=Axe)
    pending: list[tuple[str, str]] = field(default_factory=list)
    audited: dict[str, list[Finding]] = field(default_factory=dict)
    paths: set[str] = field(default_factory=set)
    lesser: list[Finding] = field(default_factory=list)
    # Sites a test passes through that are not the portal (a company's identity provider): not audited.
    others: set[str] = field(default_factory=set)

    def watch(self, context) -> None:
        context.on("response", self._keep_document)

    def _keep_document(self, response) -> None:
        if response.request.resource_type != "document" or 300 <= response.status < 400:
            return
        if "text/html" not in response.headers.get("content-type", ""):
            return
        if any(response.url.startswith(origin + "/") for origin in self.others):
            return
        if response.frame.parent_frame is not None:
            # A framed document is not a portal page: the console frames an email as its recipient sees it.
            return
        try:
            self.pending.append((response.url, response.text()))
        except PlaywrightError:
            # The browser dropped the body: the page was left before it finished loading.
            pass

    def audit_pending(self, browser) -> list[Finding]:
        """Audit every document kept since the last call; return the serious and critical findings."""
        documents, self.pending = self.pending, []
        blocking: list[Finding] = []
        if not documents:
            return blocking
        context = browser.new_context()
        page = context.new_page()
        try:
            for url, html in documents:
                path = _without_tokens(urlsplit(url).path)
                self.paths.add(path)
                key = hashlib.sha256(html.encode()).hexdigest()
                if key not in self.audited:
                    self.audited[key] = self._audit(page, url, path, html)
                    self.lesser.extend(f for f in self.audited[key] if f.impact not in BLOCKING_IMPACTS)
                blocking.extend(f for f in self.audited[key] if f.impact in BLOCKING_IMPACTS)
        finally:
            context.close()
        return blocking

    def _audit(self, page, url: str, path: str, html: str) -> list[Finding]:
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
        findings = []
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 900})
            # Served from the same origin, so the stylesheet (and its contrast) is the real one.
            page.route(url, lambda route, _request, body=html: route.fulfill(body=body, content_type="text/html"))
            page.goto(url if url.startswith(origin) else origin)
            page.unroute(url)
            results = self.axe.run(page, options={"resultTypes": ["violations"]})
            for violation in results.response["violations"]:
                targets = tuple(str(t) for node in violation["nodes"] for t in node["target"])
                findings.append(
                    Finding(violation["id"], violation["impact"] or "minor", path, width, targets, violation["help"])
                )
        return findings
