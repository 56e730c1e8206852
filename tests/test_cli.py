from datetime import UTC, datetime

from portal.seed import HISTORY_COLLEAGUES, HISTORY_VOLUNTEERS, history_sessions


def test_users_create_makes_a_login_and_its_company(runner, auth, count):
    result = runner.invoke(
        args=[
            "users",
            "create",
            "--email",
            "Boss@Globex.example",
            "--role",
            "manager",
            "--company",
            "Globex",
            "--password",
            "correct-horse-battery",
        ]
    )
    assert result.exit_code == 0, result.output
    assert auth.login("boss@globex.example").status_code == 302
    assert count("companies", "name = 'Globex'") == 1


def test_users_create_refuses_bad_input_and_writes_nothing(runner, count):
    result = runner.invoke(
        args=["users", "create", "--email", "x@y.example", "--role", "manager", "--password", "correct-horse-battery"]
    )
    assert result.exit_code != 0
    assert "--company" in result.output
    short = runner.invoke(args=["users", "create", "--email", "x@y.example", "--role", "admin", "--password", "short"])
    assert short.exit_code != 0 and "at least" in short.output
    admin_in_a_company = runner.invoke(
        args=["users", "create", "--email", "a@teei.example", "--role", "admin", "--company", "Globex"]
        + ["--password", "correct-horse-battery"]
    )
    assert admin_in_a_company.exit_code != 0 and "leave out --company" in admin_in_a_company.output
    assert count("users") == 0 and count("companies") == 0


def test_demo_seed_without_attendance_leaves_the_sessions_to_the_simulator(runner, count):
    assert runner.invoke(args=["demo", "seed", "--without-attendance"]).exit_code == 0
    # The weekly sessions are the simulator's; the year of history (nineteen more colleagues) is seeded.
    assert count("users") == 5 + len(HISTORY_VOLUNTEERS) + len(HISTORY_COLLEAGUES)
    assert count("attendance_sessions") == history_session_count()


def test_demo_seed_is_idempotent(runner, count):
    first = runner.invoke(args=["demo", "seed"])
    assert first.exit_code == 0 and "manager@northwind.example" in first.output

    def counts():
        return [count(table) for table in ("companies", "users", "company_memberships", "attendance_sessions")]

    before = counts()
    assert runner.invoke(args=["demo", "seed"]).exit_code == 0
    assert counts() == before
    # The manager, the three employees and the history's nineteen belong to the company; the admin to
    # none. Sessions: 9 + 6 + 12 weekly ones, 2 of a colleague who has no account yet, and the history.
    people = len(HISTORY_VOLUNTEERS) + len(HISTORY_COLLEAGUES)
    assert before == [1, 5 + people, 4 + people, 29 + history_session_count()]


def history_session_count() -> int:
    return sum(len(found) for found in history_sessions(datetime.now(UTC)).values())
