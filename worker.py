"""`python worker.py [--burst]`: the RQ worker for the email queue and its dead-letter queue."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--burst", action="store_true", help="drain both queues, then exit")
    args = parser.parse_args(argv)

    from portal.account.operations import password_reset_task
    from portal.campaigns.sending import campaign_task
    from portal.context import build_context
    from portal.core.settings import Settings
    from portal.outbox.worker import run_worker
    from portal.privacy.retention import retention_task
    from portal.report_emails.operations import schedule_task

    settings = Settings.from_env()
    # The areas' periodic passes; the engine runs them under a lock and never imports an area.
    periodic = (
        schedule_task(settings),
        campaign_task(settings),
        password_reset_task(settings),
        retention_task(settings),
    )
    return run_worker(build_context(settings), burst=args.burst, periodic=periodic)


if __name__ == "__main__":
    sys.exit(main())
