"""Bounce classes: what a bounce receipt's `bounce.type` and `bounce.subType` mean, as codes.

Resend's `email.bounced` webhook carries `data.bounce = {"type", "subType", "message"}`. Resend
documents the fields and shows "Permanent" / "General" (and "Suppressed"), and names no full list;
the values follow Amazon SES's bounce types (Permanent, Transient, Undetermined) and subtypes
(General, NoEmail, Suppressed, OnAccountSuppressionList, MailboxFull, MessageTooLarge,
ContentRejected, AttachmentRejected), which is what is read here. Anything else falls back on the
type alone: a permanent bounce of unknown kind is a refusal by the receiving server, any other one
temporary. A bounce with no type at all is taken as permanent, as the engine always has.

The engine hands out these codes; a page words them (console/words.py, the campaign page).
A soft bounce (SOFT) suppresses the address only after SOFT_BOUNCES_TO_SUPPRESS of them within
SOFT_BOUNCE_WINDOW_DAYS; any other class at once (hear/receipts.py).
"""

from __future__ import annotations

NO_MAILBOX = "no_mailbox"  # the mailbox does not exist
MAILBOX_FULL = "mailbox_full"
BLOCKED = "blocked"  # the receiving server refused the email
SPAM = "spam"  # the message was rejected as spam (its content)
TEMPORARY = "temporary"  # a passing failure: try again later
CLASSES = (NO_MAILBOX, MAILBOX_FULL, BLOCKED, SPAM, TEMPORARY)
SOFT = frozenset({MAILBOX_FULL, TEMPORARY})
HARD = frozenset(CLASSES) - SOFT
SOFT_SQL = "(" + ", ".join(f"'{code}'" for code in sorted(SOFT)) + ")"  # constants, never input

SOFT_BOUNCES_TO_SUPPRESS = 2
SOFT_BOUNCE_WINDOW_DAYS = 30

PERMANENT, TRANSIENT = "permanent", "transient"
# subType (lower-cased) -> class, whatever the type says.
_BY_SUBTYPE = {
    "noemail": NO_MAILBOX,
    "suppressed": NO_MAILBOX,  # the provider refused it for an address that hard-bounced before
    "onaccountsuppressionlist": NO_MAILBOX,
    "mailboxfull": MAILBOX_FULL,
    "contentrejected": SPAM,
    "attachmentrejected": SPAM,
}


def classify(bounce_type: str | None, subtype: str | None) -> str:
    """The class of a bounce, from Resend's bounce.type and bounce.subType (either may be missing)."""
    by_subtype = _BY_SUBTYPE.get((subtype or "").lower())
    if by_subtype is not None:
        return by_subtype
    kind = (bounce_type or PERMANENT).lower()
    return BLOCKED if kind == PERMANENT else TEMPORARY


def is_soft(bounce_class: str | None) -> bool:
    return bounce_class in SOFT
