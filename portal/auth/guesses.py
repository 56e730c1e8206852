"""Password guesses on the web: the per-client limits every form that checks a password shares.

Sign-in, the account page's "current password" and erasing one's own account each check a
password, so each is a way to guess one; they count as one (Flask-Limiter's shared limits), and a
guess refused on any of them counts on the others.

Two limits, on failed guesses only (a right password is no guess):

- per client and address: GUESSES_PER_ACCOUNT in the window at one account from one client (an
  IPv4 address, an IPv6 /64), as the single per-client limit allowed before, so an attacker
  gets no more guesses at any one account; past it, that client's attempts at that account are
  refused before any password is checked, the right one too (else the refusal would tell).
- per client: GUESSES_PER_CLIENT in the window at any accounts, a ceiling for guessing across
  many accounts, high enough that an office sharing one address cannot reach it by typos: five
  typos from one colleague no longer lock everyone behind that address out.

The per-address slow-down (portal/auth/throttle.py) still counts every client's failures at an
address, in the database. Limit keys hold the address's hash, never the address.
"""

from __future__ import annotations

from datetime import datetime

from flask import g, request
from flask_login import current_user

from portal.auth import throttle
from portal.core.db import Database
from portal.web.extensions import client_network, limiter

GUESSES_PER_ACCOUNT = 5
GUESSES_PER_CLIENT = 30
WINDOW = "5 minutes"
_REFUSED = "password_guess_refused"


def _guessed_address() -> str:
    """The account being guessed at: the signed-in person's own, else the address typed to sign in."""
    if current_user.is_authenticated:
        return current_user.email
    return request.form.get("email", "")


def _client_and_address() -> str:
    return f"{client_network()}/{throttle.login_failure_key(_guessed_address())}"


def _refused_here(_response) -> bool:
    return g.get(_REFUSED, False)


_PER_ACCOUNT = limiter.shared_limit(
    f"{GUESSES_PER_ACCOUNT} per {WINDOW}",
    scope="password-guesses-account",
    key_func=_client_and_address,
    methods=["POST"],
    deduct_when=_refused_here,
)
_PER_CLIENT = limiter.shared_limit(
    f"{GUESSES_PER_CLIENT} per {WINDOW}",
    scope="password-guesses-client",
    methods=["POST"],
    deduct_when=_refused_here,
)


def password_guesses(view):
    """Decorator for a view that checks a password: both limits, shared with every other such view."""
    return _PER_CLIENT(_PER_ACCOUNT(view))


def guess_refused(db: Database, email: str, *, now: datetime) -> None:
    """A password check for `email` failed: it counts against the address (the slow-down) and,
    when the request ends, against this client's limits."""
    throttle.record_failure(db, email, now=now)
    g.setdefault(_REFUSED, True)
