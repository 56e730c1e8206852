"""Personal data of people who never became users is kept for its period, then erased by the purge."""

from datetime import timedelta

import sqlalchemy as sa

from portal.core import clock
from portal.demo.operations import request_demo
from portal.privacy.retention import holdings, purge_personal_data


def test_a_demo_request_is_kept_for_its_period_then_erased(ctx, count):
    request_demo(ctx, name="Old Request", email="old@example.org", company="Old Co", message="Long ago")
    with ctx.db.read() as conn:
        old_key = conn.execute(sa.text("SELECT replay_key FROM demo_submissions")).scalar()
    with ctx.db.write() as conn:
        conn.execute(sa.text("UPDATE demo_submissions SET created_at = :at"), {"at": clock.iso_in(-400 * 86400)})
        conn.execute(sa.text("UPDATE demo_leads SET last_requested_at = :at"), {"at": clock.iso_in(-400 * 86400)})
    request_demo(ctx, name="New Request", email="new@example.org", company="New Co", message="Today")

    (demo,) = [h for h in holdings(ctx.db, ctx.settings) if h.setting == "DEMO_REQUEST_RETENTION_DAYS"]
    assert demo.count == 2 and demo.days == 365
    assert clock.parse(demo.erased_from) < clock.utcnow()  # the old one is already due

    purge_personal_data(ctx.db, ctx.settings, now=clock.utcnow())
    assert count("demo_submissions", "email = 'old@example.org' OR name = 'Old Request' OR company = 'Old Co'") == 0
    assert count("demo_submissions", "replay_key = :k", k=old_key) == 0
    assert count("demo_leads", "email = 'old@example.org' OR company = 'Old Co'") == 0
    assert count("demo_submissions", "email = 'new@example.org' AND name = 'New Request'") == 1
    # A day later nothing more is due: the new request stays until its own year is up.
    purge_personal_data(ctx.db, ctx.settings, now=clock.utcnow() + timedelta(days=1))
    assert count("demo_submissions", "email = 'new@example.org'") == 1


def test_the_admins_see_each_rule_with_what_it_holds(client, admin):
    page = client.get("/admin/privacy").get_data(as_text=True)
    assert "How long personal data is kept" in page
    for setting in (
        "DEMO_REQUEST_RETENTION_DAYS",
        "DECLINED_APPLICATION_RETENTION_DAYS",
        "OPEN_INVITATION_RETENTION_DAYS",
    ):
        assert setting in page
