import pytest
import sqlalchemy as sa



@pytest.fixture
def manager(db, make_user):
    email = make_user("manager", company="Acme Ltd")
    with db.read() as conn:
        user_id = conn.execute(sa.text("SELECT id FROM users WHERE email = :e"), {"e": email}).scalar()
    from portal.auth.service import load_user
    return load_user(db, user_id)


@pytest.fixture
def services(app):
    return app.extensions["portal"]
