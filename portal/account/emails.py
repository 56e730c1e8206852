"""The password reset email: a link, valid for an hour and once, to choose a new password."""

from __future__ import annotations

from portal.account.tokens import reset_url
from portal.core.i18n import ENGLISH, language_of, translate
from portal.outbox import EmailIntent, Family

PASSWORD_RESET = Family(
    name="password_reset",
    id_prefix="pwr",
    template="password_reset",
    template_version=1,
    subject=lambda data: translate(language_of(data), "Reset your TEEI Partner Portal password"),
    # The link is built when the email is rendered: the stored input holds only the nonce.
    prepare=lambda data, settings: {**data, "reset_url": reset_url(settings, data["token_nonce"])},
)

FAMILIES = (PASSWORD_RESET,)


def password_reset_email(
    reset_id: int, *, address: str, name: str, token_nonce: str, minutes: int, language: str = ENGLISH
) -> EmailIntent:
    """`language`: the page's the person asked on (their request keeps it for the worker's pass)."""
    return EmailIntent(
        family=PASSWORD_RESET,
        recipient=address,
        idempotency_key=f"password-reset:{reset_id}",
        subject_ref=f"password-reset:{reset_id}",
        data={"name": name, "token_nonce": token_nonce, "minutes": minutes, "language": language},
    )
