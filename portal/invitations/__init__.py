"""Invitations: a manager invites colleagues; an invited person accepts and gets an account.

Other areas use this one only through the names below (its face; tests/test_floors.py).
"""

from portal.invitations.display import invitation_view
from portal.invitations.emails import INVITER_FIELD, invitation_subject, inviter_stand_ins
from portal.invitations.managers import invite_manager, resend_manager_invitation
from portal.invitations.operations import (
    InvitationError,
    OpenedInvitation,
    insert_invitation,
    invite_colleagues,
    revoke_invitation,
)
from portal.invitations.queries import invitation_company, invitation_page
from portal.invitations.tokens import accept_url

__all__ = [
    "INVITER_FIELD",
    "InvitationError",
    "OpenedInvitation",
    "accept_url",
    "insert_invitation",
    "invitation_company",
    "invitation_page",
    "invitation_subject",
    "invitation_view",
    "inviter_stand_ins",
    "invite_colleagues",
    "invite_manager",
    "resend_manager_invitation",
    "revoke_invitation",
]
