"""The invitation email: a manager invites a colleague to volunteer in a TEEI programme.

Each email is written in one language, stored with its input (`language`): a volunteer's
invitation in the one the manager chose on the invite form, a manager's invitation in the reading
language of an address that has an account, else in the inviting person's page language. Rows
from before languages have none and are English (`language_of`).
"""

from __future__ import annotations

from portal.core import clock
from portal.core.i18n import ENGLISH, LANGUAGES, N_, day, language_of, language_or_default, translate
from portal.core.programmes import PROGRAMMES
from portal.invitations.tokens import accept_url
from portal.outbox import EmailIntent, Family, WrittenWith

# Who invites, when the inviting person has no name: written in the email's language. A caller may
# pass one of these stand-ins (English, marked for the catalogue where it is written) as the
# inviter's name; a person's own name is never translated.
A_COLLEAGUE = N_("A colleague")
_STAND_INS = frozenset({A_COLLEAGUE, "The TEEI partnerships team"})  # the second: portal/admin/routes.py

INVITATION = Family(
    name="invitation",
    id_prefix="inv",
    template="invitation",
    template_version=2,  # 2: greets the invitee by name when one was pasted
    subject=lambda data: translate(
        language_of(data),
        "%(company)s invites you to volunteer with %(programme)s",
        company=data["company_name"],
        programme=PROGRAMMES[data["programme"]],
    ),
    prepare=lambda data, settings: {
        **data,
        "programme_name": PROGRAMMES[data["programme"]],
        "accept_url": accept_url(settings, data["token_nonce"]),
    },
    # A bulk invitation writes hundreds at once; one from the browser is a group of one, sent alone.
    batchable=True,
)

# A second manager, added by a manager, or a company's first manager, invited again by an admin
# (the first invitation went out inside the approval email; see portal/applications/emails.py).
MANAGER_INVITATION = Family(
    name="manager_invitation",
    id_prefix="mgi",
    template="manager_invitation",
    template_version=2,  # 2: greets the new manager by name when one was given
    subject=lambda data: translate(
        language_of(data), "You are invited to manage volunteering at %(company)s", company=data["company_name"]
    ),
    prepare=lambda data, settings: {**data, "accept_url": accept_url(settings, data["token_nonce"])},
)

FAMILIES = (INVITATION, MANAGER_INVITATION)

# The input field that names who invited: an erased person's name leaves the invitations they sent
# (portal/privacy/operations.py), A_COLLEAGUE taking its place; the other stand-ins stay.
INVITER_FIELD = "inviter_name"


def inviter_stand_ins() -> tuple[dict[str, str], list[str]]:
    """({language: A_COLLEAGUE in it}, every stand-in in every language) for an erased inviter."""
    replacing = {language: translate(language, A_COLLEAGUE) for language in LANGUAGES}
    return replacing, sorted({translate(language, name) for language in LANGUAGES for name in _STAND_INS})


def _inviter(name: str | None, language: str) -> str:
    """The inviter as the email names them: their name, or a stand-in in the email's language."""
    if not name or name in _STAND_INS:
        return translate(language, name or A_COLLEAGUE)
    return name


def _expires_on(invitation, language: str) -> str:
    """The expiry as the email states it, in its language: 4 Mar 2099 / 4. mars 2099."""
    return day(clock.parse(invitation.expires_at).date(), language)  # UTC's date, as clock.display_date


def invitation_email(invitation, address: str, programme: str, manager, language: str = ENGLISH) -> EmailIntent:
    """The intent for one send of an invitation; a resend has a new send number, so its own key.

    `language`: the email's, as the manager chose it on the invite form (or their page's)."""
    return EmailIntent(
        family=INVITATION,
        recipient=address,
        idempotency_key=invitation_key(invitation.id, invitation.send_number),
        subject_ref=invitation_subject(invitation.id),
        data=_invitation_data(invitation, programme, manager, language),
    )


def opening_email(invitation, address: str, programme: str, manager, language: str = ENGLISH) -> EmailIntent:
    """The intent for the first send of an invitation the same write opens, before its ID and send
    number are known (invitation.id is None): found by its new link's nonce, it takes its key,
    subject and the invitee's name kept with it from the row (OPENED_INVITATION)."""
    return EmailIntent(
        family=INVITATION,
        recipient=address,
        idempotency_key=None,
        match=invitation.token_nonce,
        data=_invitation_data(invitation, programme, manager, language),
    )


def _invitation_data(invitation, programme: str, manager, language: str) -> dict:
    language = language_or_default(language)
    return {
        "company_name": manager.company_name,
        "inviter_name": _inviter(manager.name, language),
        "invitee_name": invitation.name or "",
        "programme": programme,
        "token_nonce": invitation.token_nonce,
        "expires_on": _expires_on(invitation, language),
        "language": language,
    }


def manager_invitation_email(
    invitation, address: str, *, company_name: str, inviter_name: str, language: str = ENGLISH
) -> EmailIntent:
    """The intent for one send of a manager's invitation; keyed on the send number, like a volunteer's."""
    language = language_or_default(language)
    return EmailIntent(
        family=MANAGER_INVITATION,
        recipient=address,
        idempotency_key=invitation_key(invitation.id, invitation.send_number),
        subject_ref=invitation_subject(invitation.id),
        data={
            "company_name": company_name,
            "inviter_name": _inviter(inviter_name, language),
            "invitee_name": invitation.name or "",
            "token_nonce": invitation.token_nonce,
            "expires_on": _expires_on(invitation, language),
            "language": language,
        },
    )


def invitation_key(invitation_id: int, send_number: int) -> str:
    """One send's idempotency key (OPENED_INVITATION writes the same in SQL)."""
    return f"invitation:{invitation_id}:send:{send_number}"


def invitation_subject(invitation_id: int) -> str:
    """The subject_ref that ties an invitation's emails to it (OPENED_INVITATION writes the same in SQL)."""
    return f"invitation:{invitation_id}"


# An invitation a write opened, found by its new nonce (nobody else's: nonces are unique), with its
# email's key and subject as invitation_key and invitation_subject build them, and the name kept
# with it (the one pasted now, else the one pasted before). (':' || 'send:': a Statement would read
# ':send' as a parameter.)
OPENED_INVITATION = WrittenWith(
    """SELECT token_nonce AS match, 'invitation:' || id || ':' || 'send:' || send_count AS idempotency_key,
              'invitation:' || id AS subject_ref,
              CASE WHEN name IS NULL THEN NULL ELSE json_object('invitee_name', name) END AS patch
       FROM invitations"""
)
