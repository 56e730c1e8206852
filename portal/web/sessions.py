"""Starting a signed-in session: the one way every view signs someone in; and the address the
sign-in page starts with after a password reset."""

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


# The address the sign-in page starts with, once: a password reset sets it, so the person who has
# just chosen a password types only that. In the session, not the URL: addresses stay out of logs.
_SIGN_IN_ADDRESS = "sign_in_address"


def offer_sign_in_as(email: str) -> None:
    session[_SIGN_IN_ADDRESS] = email


def offered_sign_in_address() -> str | None:
    """The address offered by offer_sign_in_as, once."""
    return session.pop(_SIGN_IN_ADDRESS, None)
