"""Starting a signed-in session: the one way every view signs someone in."""

from __future__ import annotations

from typing import Protocol

from flask import session
from flask_login import login_user


class SignedInUser(Protocol):
    """What Flask-Login asks of an account (the auth area's User has it)."""

    is_active: bool

    def get_id(self) -> str: ...


def start_session(user: SignedInUser) -> None:
    """Sign `user` in for this browser, for at most SESSION_LIFETIME idle (see create_app).

    The session stores the account's session generation, so end_all_sessions ends it.
    """
    session.clear()  # nothing from before sign-in (e.g. an anonymous visitor's state) carries over
    session.permanent = True
    login_user(user)
