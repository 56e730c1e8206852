"""A development stand-in for the TEEI programme platforms: signed attendance for the demo company.

Posts the demo employees' weekly sessions (portal.seed.demo_sessions) to POST /api/attendance,
signed with ATTENDANCE_WEBHOOK_SECRET exactly as a platform signs them (Standard Webhooks), so
under `make run` hours reach the portal through the real API. It also sends a no-show, and two
sessions of a colleague who has no account yet (kept unmatched until she is invited and accepts).

Deterministic: a week's session has the same ID and version on every run, and a delivery's
webhook-id is derived from its body, so running it again changes nothing (the portal answers with
the first delivery's counts). A new week brings new sessions.

    python devtools/programme_simulator.py [--url http://127.0.0.1:5000/api/attendance]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

from standardwebhooks.webhooks import Webhook

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from portal.core.settings import ConfigError, Settings  # noqa: E402
from portal.seed import demo_sessions  # noqa: E402

MAX_SESSIONS = 1000


def post(url: str, secret: str, platform: str, sessions: list[dict], *, wait_seconds: float = 10) -> dict:
    """One signed delivery; the webhook-id is the body's hash, so a repeat is a replay."""
    body = json.dumps({"platform": platform, "sessions": sessions}, sort_keys=True)
    webhook_id = "sim_" + hashlib.sha256(body.encode()).hexdigest()[:32]
    deadline = time.monotonic() + wait_seconds
    while True:
        now = datetime.now(UTC)
        headers = {
            "content-type": "application/json",
            "webhook-id": webhook_id,
            "webhook-timestamp": str(int(now.timestamp())),
            "webhook-signature": Webhook(secret).sign(webhook_id, now, body),
        }
        request = urllib.request.Request(url, data=body.encode(), headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            raise RuntimeError(f"{platform}: the portal answered {error.code}: {error.read()[:500]!r}") from None
        except urllib.error.URLError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.25)  # the web server is still starting


def send_demo_attendance(url: str, secret: str, now: datetime | None = None) -> dict[str, dict]:
    answers = {}
    for platform, sessions in sorted(demo_sessions(now or datetime.now(UTC)).items()):
        for start in range(0, len(sessions), MAX_SESSIONS):
            answers[platform] = post(url, secret, platform, sessions[start : start + MAX_SESSIONS])
    return answers


def main(argv: list[str] | None = None) -> int:
    try:
        settings = Settings.from_env()
    except ConfigError as error:
        print(error.code, file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=f"{settings.public_base_url}/api/attendance")
    args = parser.parse_args(argv)
    try:
        answers = send_demo_attendance(args.url, settings.attendance_webhook_secret)
    except (RuntimeError, OSError) as error:
        print(f"programme simulator: nothing sent ({error})", file=sys.stderr)
        return 1
    for platform, answer in answers.items():
        counts = ", ".join(f"{key} {answer[key]}" for key in ("received", "applied", "unmatched", "stale"))
        print(f"programme simulator: {platform}: {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
