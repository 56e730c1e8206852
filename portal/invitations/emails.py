"""The invitation email: a manager invites a colleague to volunteer in a TEEI programme."""

from __future__ import annotations

from portal.core.programmes import PROGRAMMES
from portal.invitations.tokens import accept_url
from portal.outbox import EmailIntent, Family

INVITATION = Family(
    name="invitation",
    id_prefix="inv",
    template="invitation",
    template_version=2,  # 2: greets the invitee by name when one was pasted
    subject=lambda data: f"{data['company_name']} invites you to volunteer with {PROGRAMMES[data['programme']]}",
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
    template_version=1,
    subject=lambda data: f"You are invited to manage volunteering at {data['company_name']}",
    prepare=lambda data, settings: {**data, "accept_url": accept_url(settings, data["token_nonce"])},
)

FAMILIES = (INVITATION, MANAGER_INVITATION)


def invitation_email(invitation, address: str, programme: str, manager) -> EmailIntent:
    """The intent for one send of an invitation; a resend has a new send number, so its own key."""
    return EmailIntent(
        family=INVITATION,
        recipient=address,
        idempotency_key=f"invitation:{invitation.id}:send:{invitation.send_number}",
        subject_ref=invitation_subject(invitation.id),
        data={
            "company_name": manager.company_name,
            "inviter_name": manager.name or "A colleague",
            "invitee_name": invitation.name or "",
            "programme": programme,
            "token_nonce": invitation.token_nonce,
            "expires_on": invitation.expires_on,
        },
    )


def manager_invitation_email(invitation, address: str, *, company_name: str, inviter_name: str) -> EmailIntent:
    """The intent for one send of a manager's invitation; keyed on the send number, like a volunteer's."""
    return EmailIntent(
        family=MANAGER_INVITATION,
        recipient=address,
        idempotency_key=f"invitation:{invitation.id}:send:{invitation.send_number}",
        subject_ref=invitation_subject(invitation.id),
        data={
            "company_name": company_name,
            "inviter_name": inviter_name,
            "token_nonce": invitation.token_nonce,
            "expires_on": invitation.expires_on,
        },
    )


def invitation_subject(invitation_id: int) -> str:
    """The subject_ref that ties an invitation's emails to it."""
    return f"invitation:{invitation_id}"
