"""The provider model's HTTP face: Resend's routes, the /_model controls and the mail viewer.

Built on http.server rather than a framework so that a handler can close the socket without
writing a byte, which is how a lost answer looks to the client. The model object is handed in,
so this module imports nothing from the package (the package imports it).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit


def make_server(model, host: str, port: int) -> ThreadingHTTPServer:
    return _Server((host, port), model)


class _Server(ThreadingHTTPServer):
    # A slow_accept still sleeping must not hold up stop().
    daemon_threads = True

    def __init__(self, address, model):
        self.model = model
        super().__init__(address, _Handler)


class _Handler(BaseHTTPRequestHandler):
    server_version = "provider-model/1"
    # Keep-alive, like the real API: a sender that reuses its connection is measured as it would run.
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; without this, Nagle and delayed ACKs add 40 ms each.
    disable_nagle_algorithm = True

    def log_message(self, format, *args):
        # Every POST /emails is in the model's own log; per-request lines would only be noise.
        pass

    def do_GET(self):
        # The SDK sends its (empty) JSON params as a body even on a GET; read it, or on a kept-alive
        # connection its bytes would be taken for the start of the next request.
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        path = unquote(urlsplit(self.path).path)
        model = self.server.model
        if path == "/":
            return self._html(200, render_index(model.sent()))
        if path.startswith("/view/") and "/attachments/" in path:
            return self._attachment(model, *path[len("/view/") :].split("/attachments/", 1))
        if path.startswith("/view/"):
            email = _find(model.sent(), path[len("/view/") :])
            if email is None:
                return self._html(404, _page("Not found", "<p>No email with that ID was sent.</p>"))
            receipts = [r for r in model.receipts() if r["email_id"] == email["id"]]
            return self._html(200, render_email(email, receipts))
        if path.startswith("/emails/"):
            return self._answer(model.handle_get(self.headers.get("Authorization"), path[len("/emails/") :]))
        if path == "/suppressions" or path.startswith("/suppressions/"):
            query = {name: values[-1] for name, values in parse_qs(urlsplit(self.path).query).items()}
            return self._suppressions(
                model.handle_suppressions(
                    self.headers.get("Authorization"), "GET", path[len("/suppressions/") :], b"", query
                )
            )
        if path == "/emails":
            query = {name: values[-1] for name, values in parse_qs(urlsplit(self.path).query).items()}
            return self._answer(model.handle_list(self.headers.get("Authorization"), query))
        if path == "/_model/requests":
            return self._json(200, model.requests())
        if path == "/_model/sent":
            return self._json(200, model.sent())
        if path == "/_model/receipts":
            return self._json(200, model.receipts())
        self._not_found()

    def do_POST(self):
        path = urlsplit(self.path).path
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if path == "/emails":
            answer = self.server.model.handle_send(
                raw, self.headers.get("Authorization"), self.headers.get("Idempotency-Key")
            )
            if answer.drop:
                # No status line, no headers: the server closes the socket after this returns.
                self.close_connection = True
                return
            return self._answer(answer)
        if path == "/emails/batch":
            answer = self.server.model.handle_batch(
                raw,
                self.headers.get("Authorization"),
                self.headers.get("Idempotency-Key"),
                self.headers.get("x-batch-validation"),
            )
            if answer.drop:
                self.close_connection = True
                return
            return self._answer(answer)
        if path == "/suppressions":
            return self._suppressions(
                self.server.model.handle_suppressions(self.headers.get("Authorization"), "POST", "", raw)
            )
        if path in _CONTROLS:
            if not _may_control(self.headers, self.server.server_address):
                return self._json(403, {"ok": False, "error": _CROSS_SITE_REFUSED})
            return self._control(_CONTROLS[path], raw)
        self._not_found()

    def do_DELETE(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        path = unquote(urlsplit(self.path).path)
        if path.startswith("/suppressions/"):
            return self._suppressions(
                self.server.model.handle_suppressions(
                    self.headers.get("Authorization"), "DELETE", path[len("/suppressions/") :], b""
                )
            )
        self._not_found()

    def _attachment(self, model, message_id: str, index: str):
        """An attachment as the recipient would open it: its decoded bytes, with its content type."""
        email = _find(model.sent(), message_id)
        attachments = email["attachments"] if email else []
        if not index.isdigit() or int(index) >= len(attachments):
            return self._html(404, _page("Not found", "<p>No such attachment.</p>"))
        attachment = attachments[int(index)]
        try:
            data = base64.b64decode(str(attachment.get("content", "")), validate=True)
        except (binascii.Error, ValueError):
            return self._html(422, _page("Unreadable", "<p>The attachment is not valid base64.</p>"))
        content_type = str(attachment.get("content_type") or "application/octet-stream")
        filename = str(attachment.get("filename") or "attachment").replace('"', "")
        self._send(200, data, content_type, {"content-disposition": f'inline; filename="{filename}"'})

    def _control(self, action, raw: bytes):
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("expected a JSON object")
            action(self.server.model, body)
        except (ValueError, TypeError) as exc:
            return self._json(400, {"ok": False, "error": str(exc)})
        self._json(200, {"ok": True})

    def _not_found(self):
        self._json(404, {"statusCode": 404, "name": "not_found", "message": "The requested endpoint does not exist."})

    def _suppressions(self, answer):
        if answer.drop:  # the connection closes with no answer
            self.close_connection = True
            return
        return self._answer(answer)

    def _answer(self, answer):
        self._json(answer.status, answer.body, answer.headers)

    def _json(self, status: int, body, headers: dict | None = None):
        self._send(status, json.dumps(body).encode(), "application/json", headers)

    def _html(self, status: int, page: str):
        self._send(status, page.encode(), "text/html; charset=utf-8")

    def _send(self, status: int, data: bytes, content_type: str, headers: dict | None = None):
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.send_header("x-content-type-options", "nosniff")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


_CROSS_SITE_REFUSED = "control requests take JSON (or no body) and come from tests or scripts, not from web pages"


def _may_control(headers, server_address) -> bool:
    """Controls (faults, clock, reset, receipts) are for tests and scripts, never for a web page.

    A page on any site can make a browser POST a form here (text/plain, form-encoded or multipart,
    with no preflight); it cannot send application/json cross-site without a CORS preflight, which
    this server never answers. So a control request must carry JSON or no body, and any Origin it
    carries must be this server's own.
    """
    content_type = (headers.get("Content-Type") or "").split(";")[0].strip().lower()
    if content_type not in ("", "application/json"):
        return False
    origin = headers.get("Origin")
    if origin is None:
        return True
    host, port = server_address[:2]
    return origin in (f"http://{host}:{port}", f"http://localhost:{port}", f"http://127.0.0.1:{port}")


_CONTROLS = {
    "/_model/faults": lambda model, body: model.fail_next(
        body.get("mode"),
        count=body.get("count", 1),
        retry_after=body.get("retry_after"),
        delay=body.get("delay"),
        path=body.get("path", "/emails"),
        skip=body.get("skip", 0),
    ),
    "/_model/clock": lambda model, body: model.advance_clock(body.get("advance_seconds")),
    "/_model/reset": lambda model, body: model.reset(),
    "/_model/receipts/pause": lambda model, body: model.pause_receipts(),
    "/_model/receipts/resume": lambda model, body: model.resume_receipts(),
    "/_model/receipts/redeliver": lambda model, body: model.redeliver_receipt(body.get("id")),
}


def _find(emails: list[dict], message_id: str) -> dict | None:
    return next((e for e in emails if e["id"] == message_id), None)


# --- the mail viewer ---------------------------------------------------------------------------

_CSS = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d2733;
       background: #f5f6f8; margin: 0; }
header { background: #1d2733; color: #fff; padding: .8rem 1.5rem; }
header a { color: #fff; text-decoration: none; font-weight: 600; }
header span { color: #aab4c0; margin-left: .75rem; font-size: .9em; }
main { max-width: 72rem; margin: 1.5rem auto; padding: 0 1.5rem; }
h1 { font-size: 1.35rem; margin: 0 0 1rem; overflow-wrap: anywhere; }
.wide { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid #dde1e6; }
th, td { text-align: left; vertical-align: top; padding: .5rem .75rem; border-bottom: 1px solid #eceef1; }
thead th { background: #eceef1; font-size: .85em; text-transform: uppercase; letter-spacing: .03em; }
tbody th { width: 11rem; color: #566270; font-weight: 500; }
code { font: .85em ui-monospace, SFMono-Regular, Menlo, monospace; word-break: break-all; }
.tag { display: inline-block; background: #e6eefb; color: #24456e; border-radius: 3px;
       padding: 0 .4em; margin: 0 .25em .15em 0; font-size: .85em; }
.muted { color: #5b6475; }  /* 4.5:1 and more on white, like the portal's */
h2 { font-size: 1.05rem; margin: 1.75rem 0 .5rem; }
iframe { width: 100%; height: 32rem; border: 1px solid #dde1e6; background: #fff; }
pre { background: #fff; border: 1px solid #dde1e6; padding: 1rem; white-space: pre-wrap; overflow-wrap: anywhere; }
"""


def _page(title: str, body: str, subtitle: str = "") -> str:
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)} · provider model</title><style>{_CSS}</style></head><body>"
        f'<header><a href="/">Provider model · sent mail</a><span>{escape(subtitle)}</span></header>'
        f"<main>{body}</main></body></html>"
    )


def _tags(tags: list[dict]) -> str:
    return (
        "".join(f'<span class="tag">{escape(str(t.get("name")))}={escape(str(t.get("value")))}</span>' for t in tags)
        or '<span class="muted">none</span>'
    )


def _when(iso: str) -> str:
    # "2026-10-15T09:30:12.345+00:00" -> "2026-10-15 09:30:12"; the full value is in the title.
    return iso[:19].replace("T", " ")


def _key(key: str | None) -> str:
    return f"<code>{escape(key)}</code>" if key else '<span class="muted">none</span>'


def render_index(emails: list[dict]) -> str:
    rows = "".join(
        "<tr>"
        f'<td title="{escape(e["created_at"])}">{escape(_when(e["created_at"]))}</td>'
        f"<td>{escape(', '.join(e['to']))}</td>"
        f'<td><a href="/view/{escape(e["id"])}">{escape(e["subject"])}</a></td>'
        f"<td>{_tags(e['tags'])}</td>"
        f"<td>{_key(e['idempotency_key'])}</td>"
        "</tr>"
        for e in reversed(emails)
    )
    if not rows:
        body = '<p class="muted">Nothing has been sent yet.</p>'
    else:
        body = (
            '<div class="wide"><table><thead><tr><th>Sent</th><th>To</th><th>Subject</th><th>Tags</th>'
            f"<th>Idempotency key</th></tr></thead><tbody>{rows}</tbody></table></div>"
        )
    return _page("Sent mail", "<h1>Sent mail</h1>" + body, f"{len(emails)} sent · newest first")


def _receipt_lines(receipts: list[dict]) -> str:
    lines = [
        f"{escape(r['type'])}: {escape(r['state'])}"
        + (
            f" ({escape(str(r['last_error'] or r['last_status']))})"
            if r["state"] != "delivered" and r["attempts"]
            else ""
        )
        for r in receipts
    ]
    return "<br>".join(lines) or '<span class="muted">none</span>'


def _one_click_unsubscribe(headers: dict) -> str:
    """RFC 8058: with both headers, a mail client offers an unsubscribe button that POSTs
    `List-Unsubscribe=One-Click` to the https (here also http) URL; the viewer does the same."""
    found = {name.lower(): value for name, value in headers.items()}
    urls = re.findall(r"<(https?://[^>]+)>", found.get("list-unsubscribe", ""))
    if not urls:
        return '<span class="muted">no List-Unsubscribe link</span>'
    if found.get("list-unsubscribe-post", "").strip() != "List-Unsubscribe=One-Click":
        return f'<a href="{escape(urls[0])}">Open the unsubscribe link</a> (no one-click header)'
    return (
        f'<form method="post" action="{escape(urls[0])}">'
        '<input type="hidden" name="List-Unsubscribe" value="One-Click">'
        '<button type="submit">Unsubscribe (one click, as a mail client does it)</button></form>'
    )


def render_email(email: dict, receipts: list[dict] = ()) -> str:
    def addresses(values: list[str]) -> str:
        return escape(", ".join(values)) if values else '<span class="muted">none</span>'

    custom = "<br>".join(f"{escape(k)}: {escape(v)}" for k, v in email["headers"].items())
    files = ", ".join(
        f'<a href="/view/{escape(email["id"])}/attachments/{index}">{escape(str(a.get("filename", "(unnamed)")))}</a>'
        for index, a in enumerate(email["attachments"])
    )
    fields = [
        ("Message ID", f"<code>{escape(email['id'])}</code>"),
        ("Sent", escape(email["created_at"])),
        ("From", escape(email["from"])),
        ("To", addresses(email["to"])),
        ("Cc", addresses(email["cc"])),
        ("Bcc", addresses(email["bcc"])),
        ("Reply-To", addresses(email["reply_to"])),
        ("Subject", escape(email["subject"])),
        ("Tags", _tags(email["tags"])),
        ("Idempotency key", _key(email["idempotency_key"])),
        ("Body fingerprint", f"<code>{escape(email['fingerprint'])}</code>"),
        ("Headers", custom or '<span class="muted">none</span>'),
        ("Unsubscribe", _one_click_unsubscribe(email["headers"])),
        ("Attachments", files or '<span class="muted">none</span>'),
        ("Receipts", _receipt_lines(list(receipts))),
    ]
    table = "".join(f"<tr><th>{name}</th><td>{value}</td></tr>" for name, value in fields)
    if email["html"]:
        # No allow-scripts: the email's markup renders, its scripts never run. Links open
        # outside the frame so a dev can follow e.g. an invitation link.
        srcdoc = escape('<base target="_blank">' + email["html"], quote=True)
        html_part = (
            f'<iframe title="HTML version" sandbox="allow-popups allow-popups-to-escape-sandbox" '
            f'srcdoc="{srcdoc}"></iframe>'
        )
    else:
        html_part = '<p class="muted">No HTML version.</p>'
    text_part = f"<pre>{escape(email['text'])}</pre>" if email["text"] else '<p class="muted">No text version.</p>'
    body = (
        f"<h1>{escape(email['subject'])}</h1><table><tbody>{table}</tbody></table>"
        f"<h2>HTML</h2>{html_part}<h2>Text</h2>{text_part}"
    )
    return _page(email["subject"], body, email["subject"])
