"""Issue 50, item 1, in a browser: a manager sets the year's goals (a bad value is refused at its field),
and the report's year to date shows progress against them and the same period last year."""

from __future__ import annotations

import re
from datetime import datetime
from zoneinfo import ZoneInfo

import sqlalchemy as sa
from playwright.sync_api import expect

from e2e.test_people import snapshot_widths
from portal.seed import DEMO_PASSWORD, seed_demo

MANAGER = "manager@northwind.example"
OSLO = ZoneInfo("Europe/Oslo")


def test_a_manager_sets_goals_and_the_report_measures_the_year_against_them(pages, page, stack):
    seed_demo(stack.db, secret_key=stack.secret_key, history=True)
    pages.sign_in(MANAGER, DEMO_PASSWORD)
    page.goto(f"{stack.url}/reports/settings")
    goals = page.locator("#goals")
    goals.get_by_label("Hours goal").fill("-40")
    goals.get_by_label("Participation goal (%)").fill("140")
    goals.get_by_role("button", name="Save goals").click()
    expect(page.locator("#goal_hours-error")).to_contain_text("A number of hours, 0 or more")
    expect(page.locator("#goal_participation-error")).to_contain_text("A share of colleagues from 0 to 100")
    expect(page.locator("#goal-list")).to_contain_text("no goals set")
    snapshot_widths(page, "report-goals-refused")

    page.locator("#goal_hours").fill("600")
    page.locator("#goal_participation").fill("60")
    page.get_by_role("button", name="Save goals").click()
    expect(page.get_by_role("status")).to_contain_text("Goals for")
    expect(page.locator("#goal-list")).to_contain_text("600 hours · 60% participation")
    snapshot_widths(page, "report-goals-saved")

    today = datetime.now(OSLO).date()
    page.goto(f"{stack.url}/reports?from={today.year}-01-01&to={today}&programme=all")
    hours = page.locator("#figure-hours").inner_text()
    progress = page.locator("#goal-progress")
    expect(progress).to_contain_text(
        re.compile(rf"Hours goal, year to date \(through {today}\): {re.escape(hours)} of 600 hours, \d+%")
    )
    expect(progress).to_contain_text(re.compile(r"Participation goal: [\d.]+% of 60%, \d+% of the goal"))
    expect(page.locator("#year-before-period")).to_contain_text(f"{today.year - 1}-01-01 to")
    page.locator("#comparison").scroll_into_view_if_needed()
    snapshot_widths(page, "report-goals-progress")


def test_a_volunteer_chooses_whether_their_own_time_counts(pages, page, stack):
    seed_demo(stack.db, secret_key=stack.secret_key)
    with stack.db.write() as conn:  # the platform said two of Olena's sessions were in her own time
        conn.execute(
            sa.text(
                "UPDATE attendance_sessions SET own_time = 1 WHERE id IN (SELECT id FROM attendance_sessions "
                "WHERE volunteer_email = 'olena@northwind.example' AND status = 'attended' ORDER BY held_at DESC LIMIT 2)"
            )
        )
    pages.sign_in("olena@northwind.example", DEMO_PASSWORD)
    page.goto(f"{stack.url}/me/hours")
    state = page.locator("#own-time-state")
    expect(state).to_contain_text("Not counted in your employer's report")
    expect(state).to_contain_text("you have not chosen yet")
    expect(page.get_by_role("cell", name="Own time")).to_have_count(2)
    expect(page.get_by_label("Do not count them (working-time hours always count)")).to_be_checked()
    snapshot_widths(page, "my-hours-own-time")

    page.get_by_label("Count them in my employer's report").check()
    page.get_by_role("button", name="Save my choice").click()
    expect(page.get_by_role("status")).to_contain_text("Your own-time hours now count in your employer's report.")
    expect(state).to_contain_text("Counted in your employer's report")
    expect(state).to_contain_text("your choice of")
    snapshot_widths(page, "my-hours-own-time-counted")
