"""Run the provider model on its own: `python -m devtools.provider_model --port 8025`.

Prints one line with its URL, then serves until SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import gc
import os
import signal
import sys
import threading
from pathlib import Path

from . import ProviderModel


def _positive(value: str) -> float:
    number = float(value)
    if number <= 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return number


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m devtools.provider_model",
        description="A local model of the Resend email API, with a mail viewer.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8025, help="0 picks a free port")
    parser.add_argument(
        "--window-seconds",
        type=_positive,
        default=86400,
        help="how long an idempotency key is remembered (default: 86400)",
    )
    parser.add_argument(
        "--rate-limit",
        type=int,
        default=None,
        help="requests per second before answering 429, as Resend does (default: unlimited)",
    )
    parser.add_argument("--webhook-url", help="where signed receipts (Resend webhook events) are posted")
    # The secret comes from the environment by default: a command line is visible to everyone in `ps`.
    parser.add_argument(
        "--webhook-secret",
        default=os.environ.get("RESEND_WEBHOOK_SECRET"),
        help="whsec_… secret for receipt signatures (default: $RESEND_WEBHOOK_SECRET)",
    )
    parser.add_argument("--mailbox", type=Path, help="a JSON file that keeps the sent mail across restarts")
    args = parser.parse_args(argv)

    try:
        model = ProviderModel(
            host=args.host,
            port=args.port,
            idempotency_window_seconds=args.window_seconds,
            webhook_url=args.webhook_url,
            webhook_secret=args.webhook_secret,
            mailbox_path=args.mailbox,
            rate_limit_per_second=args.rate_limit,
        )
    except ValueError as exc:
        parser.error(str(exc))
    try:
        model.start()
    except OSError as exc:
        print(f"provider model: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 1

    stopping = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stopping.set())
    print(f"provider model (Resend API and mail viewer) at {model.url}", flush=True)
    try:
        # A timed wait keeps the main thread returning to the interpreter, where signals run.
        while not stopping.wait(0.5):
            # What the model keeps only grows (every email and request, for tests to read back), and
            # a full collection scans all of it: at 90,000 emails one took 125 ms, during which no
            # request was counted, so requests the provider's window should have seen apart arrived
            # together. Moving what is kept out of the collector's sight keeps its clock steady.
            gc.freeze()
    finally:
        model.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
