"""/metrics as an operator's Prometheus reads it: every process's counts added up, the rows read
from the database, and the token rule of the contract."""

from __future__ import annotations

import sqlalchemy as sa
from prometheus_client.parser import text_string_to_metric_families

from devtools.testing import wait_until

SETTLED = ("sent", "delivered", "bounced", "complained", "failed", "suppressed", "dead_letter")


def parse(text: str) -> dict[tuple[str, frozenset], float]:
    """{(sample name, labels): value} of a scrape, through prometheus_client's own parser."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples, name: str, **labels) -> float:
    """The sum of the samples of `name` whose labels include `labels` (0 when there are none)."""
    wanted = set(labels.items())
    return sum(v for (sample, got), v in samples.items() if sample == name and wanted <= got)


def test_a_scrape_adds_up_every_worker_and_web_process(deployment, make_outbox_row, outbox_rows, db, tmp_path, count):
    """Two worker processes (the first exits before the second starts) and two gunicorn workers
    receiving receipts write their own metrics files; one scrape shows the sum, and it matches
    what the provider model saw and what the database holds."""
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    deployment.env.update(PROMETHEUS_MULTIPROC_DIR=str(metrics_dir))
    web = deployment.web()
    model = deployment.provider(webhook_url=f"{web}/webhooks/resend")
    model.fail_next("http_429", count=2, retry_after=0.5)  # the provider says "too many" twice

    first = [make_outbox_row(recipient=f"first{n}@example.org", publish=True) for n in range(4)]
    # The first worker drains the queue and exits: its counts must still be in the sum.
    drained = deployment.worker("worker-1", burst=True)
    assert drained.wait(timeout=120) == 0, deployment.log_text("worker-1")

    second = [make_outbox_row(recipient="bounce.person@example.org", publish=True)]
    second.append(make_outbox_row(recipient="left.pending@example.org"))  # committed, never published
    deployment.worker("worker-2")
    ids = first + second
    assert wait_until(lambda: all(row["status"] in SETTLED for row in outbox_rows()), timeout=90)
    model.wait_for_receipts(timeout=30)
    assert wait_until(lambda: count("email_receipts", "processed_at IS NOT NULL") == len(model.receipts()))

    samples = parse(_scrape(web))
    requests = model.requests()
    accepted = [r for r in requests if r["outcome"] == "sent"]
    limited = [r for r in requests if r["status"] == 429]
    assert len(accepted) == len(ids) and len(limited) == 2
    assert value(samples, "portal_provider_answers_total", family="notice", kind="accepted") == len(ids)
    assert value(samples, "portal_provider_rate_limited_total", family="notice") == len(limited)
    assert value(samples, "portal_provider_answers_total", kind="retry") == len(limited)
    # Each accepted email's latency from commit to acceptance, once.
    assert value(samples, "portal_email_accept_latency_seconds_count", family="notice") == len(ids)
    assert value(samples, "portal_email_accept_latency_seconds_bucket", family="notice", le="+Inf") == len(ids)
    # Every send waited for a slot of the shared limit (a try after a 429 waits again), and so did
    # the suppression lists' comparison a worker runs at its start, for its one page of Resend's list.
    pages = count("email_suppression_passes", "stopped IS NULL")
    assert value(samples, "portal_rate_limit_wait_seconds_count", result="acquired") == len(requests) + pages
    # Receipts as the provider sent them, counted where the web workers applied them.
    by_type = {}
    for receipt in model.receipts():
        by_type[receipt["type"]] = by_type.get(receipt["type"], 0) + 1
    for event_type, sent in by_type.items():
        assert value(samples, "portal_receipts_total", type=event_type) == sent, event_type
    assert value(samples, "portal_receipts_total", type="email.bounced", outcome="applied") == 1
    # The row left pending was found and published by the relay.
    assert value(samples, "portal_relay_published_rows_total", queued="yes") >= 1
    # Rows by family and status: what the database holds now, zeros included.
    with db.read() as conn:
        held = dict(conn.execute(sa.text("SELECT status, COUNT(*) FROM email_outbox GROUP BY status")).all())
    assert held == {"delivered": len(ids) - 1, "bounced": 1}
    for status in ("delivered", "bounced", "pending", "dead_letter"):
        assert value(samples, "portal_outbox_rows", family="notice", status=status) == held.get(status, 0)
    assert value(samples, "portal_outbox_oldest_age_seconds", status="pending") == 0
    # Both workers and both web processes wrote their own files.
    assert len({path.name.rsplit("_", 1)[-1] for path in metrics_dir.glob("*.db")}) >= 3


def _scrape(base_url: str, **headers) -> str:
    import requests

    answer = requests.get(f"{base_url}/metrics", headers=headers, timeout=10)
    assert answer.status_code == 200, answer.text[:300]
    assert answer.headers["Content-Type"].startswith("text/plain")
    return answer.text
