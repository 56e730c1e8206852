import pytest
import sqlalchemy as sa

from portal.auth.service import authenticate


@pytest.fixture
def manager(db, make_user):
    email = make_user("manager", company="Acme Ltd")
    with db.read() as conn:
        user_id = conn.execute(sa.text("SELECT id FROM users WHERE email = :e"), {"e": email}).scalar()
    from portal.auth.service import load_user
    return load_user(db, user_id)


@pytest.fixture
def count(db):
    def count(table, where="1=1"):
        with db.read() as conn:
            return conn.execute(sa.text(f"SELECT COUNT(*) FROM {table} WHERE {where}")).scalar()

    return count


@pytest.fixture
def services(app):
    return app.extensions["portal"]
