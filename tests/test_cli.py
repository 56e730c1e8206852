import sqlalchemy as sa


def test_users_create_makes_a_login_and_its_company(runner, client, auth, db):
    result = runner.invoke(args=["users", "create", "--email", "Boss@Globex.example", "--role", "manager",
                                 "--company", "Globex", "--password", "correct-horse-battery"])
    assert result.exit_code == 0, result.output
    assert auth.login("boss@globex.example").status_code == 302


def test_users_create_refuses_bad_input_and_writes_nothing(runner, db):
    result = runner.invoke(args=["users", "create", "--email", "x@y.example", "--role", "manager",
                                 "--password", "correct-horse-battery"])
    assert result.exit_code != 0
    assert "--company" in result.output
    short = runner.invoke(args=["users", "create", "--email", "x@y.example", "--role", "admin", "--password", "short"])
    assert short.exit_code != 0 and "at least" in short.output
    with db.read() as conn:
        assert conn.execute(sa.text("SELECT COUNT(*) FROM users")).scalar() == 0
        assert conn.execute(sa.text("SELECT COUNT(*) FROM companies")).scalar() == 0


def test_demo_seed_is_idempotent(runner, db):
    first = runner.invoke(args=["demo", "seed"])
    assert first.exit_code == 0 and "manager@northwind.example" in first.output

    def counts():
        with db.read() as conn:
            return [conn.execute(sa.text(f"SELECT COUNT(*) FROM {t}")).scalar()
                    for t in ("companies", "users", "session_attendance")]

    before = counts()
    assert runner.invoke(args=["demo", "seed"]).exit_code == 0
    assert counts() == before
    assert before[0] == 1 and before[1] == 5 and before[2] > 20
