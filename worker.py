"""`python worker.py [--burst]`: the RQ worker for the email queue and its dead-letter queue."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--burst", action="store_true", help="drain both queues, then exit")
    args = parser.parse_args(argv)

    from portal.context import PortalContext
    from portal.outbox.worker import run_worker
    from portal.settings import Settings

    return run_worker(PortalContext.from_settings(Settings.from_env()), burst=args.burst)


if __name__ == "__main__":
    sys.exit(main())
