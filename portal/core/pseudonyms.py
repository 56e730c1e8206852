"""An erased person's pseudonym, and the keyed hashes that tie what arrives after the erasure to it.

An erasure (portal/privacy/operations.py) replaces an address everywhere by a pseudonym,
erased-<random>@erased.invalid, and records the address's keyed hash with it (`erased_addresses`).
Whatever reaches the portal about the address later is written under the pseudonym, never under the
address: a programme platform's late attendance record (portal/attendance/operations.py), a late
bounce or complaint (the suppression keeps the hash: portal/outbox/hear/suppressions.py); and the
demo seed does not create an erased demo account again (portal/seed.py).

Keyed (HMAC-SHA256 under SECRET_KEY), not plain hashes: whoever holds the database alone cannot
confirm a guessed address or session ID. Rotating SECRET_KEY makes the recorded hashes unmatchable
(docs/deploy.md says so for the suppression list).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets

import sqlalchemy as sa

from portal.core.i18n import N_
from portal.core.text import normalise_email

ERASED_DOMAIN = "erased.invalid"
# An erased person's name, as stored: pages show it in their reader's language (the `person_name` filter).
ERASED_NAME = N_("Former volunteer")
ERASED_PREFIX = "erased:"  # an address's keyed hash
ERASED_SESSION_PREFIX = "erased-"  # a session ID's keyed form
# The session ID's keyed form keeps this many hex digits (80 bits): unique within one volunteer's
# sessions with room to spare, and short enough for an export's column.
SESSION_KEY_DIGITS = 20

_PSEUDONYM_OF = sa.text("SELECT pseudonym FROM erased_addresses WHERE address_hash = :hashed")
_RECORD = sa.text(
    """
    INSERT INTO erased_addresses (address_hash, pseudonym, erased_at) VALUES (:hashed, :pseudonym, :now)
    ON CONFLICT (address_hash) DO NOTHING
    """
)
# Only addresses no account holds again: a person who came back (a new invitation accepted) is
# themselves again, and what arrives for their address is theirs, under it.
_PSEUDONYMS_OF = sa.text(
    """
    SELECT p.value ->> '$[0]' AS address, e.pseudonym
    FROM json_each(:pairs) AS p JOIN erased_addresses e ON e.address_hash = p.value ->> '$[1]'
    WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.email = p.value ->> '$[0]')
    """
)


def new_pseudonym() -> str:
    return f"erased-{secrets.token_hex(6)}@{ERASED_DOMAIN}"


def _keyed(secret_key: str, text: str) -> str:
    return hmac.new(secret_key.encode(), text.encode(), hashlib.sha256).hexdigest()


def address_hash(address: str, secret_key: str) -> str:
    """The keyed hash an erased address is known by (erased_addresses, the suppression list)."""
    return ERASED_PREFIX + _keyed(secret_key, normalise_email(address))


def session_key(session_id: str, secret_key: str) -> str:
    """An erased person's session ID as it is kept: platforms' IDs may carry a first name
    (`lang-heidi-2026w45`). The same ID always gives the same key, so a platform's later correction
    of the session still finds it."""
    return ERASED_SESSION_PREFIX + _keyed(secret_key, "session:" + session_id)[:SESSION_KEY_DIGITS]


def pseudonym_of(conn: sa.Connection, address: str, secret_key: str) -> str | None:
    """The pseudonym an earlier erasure gave `address`, if any."""
    return conn.execute(_PSEUDONYM_OF, {"hashed": address_hash(address, secret_key)}).scalar()


def pseudonyms_of(conn: sa.Connection, addresses, secret_key: str) -> dict[str, str]:
    """{address: pseudonym} for the erased addresses among `addresses` that no account holds again."""
    pairs = [[address, address_hash(address, secret_key)] for address in set(addresses)]
    if not pairs:
        return {}
    return dict(conn.execute(_PSEUDONYMS_OF, {"pairs": json.dumps(pairs)}).all())


def record_erasure(conn: sa.Connection, address: str, *, pseudonym: str, secret_key: str, now: str) -> None:
    """Inside the erasure's transaction: `address` is now known only as `pseudonym`."""
    conn.execute(_RECORD, {"hashed": address_hash(address, secret_key), "pseudonym": pseudonym, "now": now})
