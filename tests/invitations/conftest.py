"""Builders for invitation tests: a signed-up manager, and inviting through the operation."""

import pytest

from portal.auth.queries import load_user
from portal.invitations import operations


@pytest.fixture
def manager(db, make_user, user_id):
    return load_user(db, user_id(make_user("manager", company="Acme Ltd")))


@pytest.fixture
def invite(ctx, manager):
    """Builder: invite(addresses, programme="language", manager=<the manager>) -> the InviteResult."""

    def make(addresses, programme="language", manager=manager):
        return operations.invite_colleagues(ctx, manager=manager, addresses=addresses, programme=programme)

    return make
