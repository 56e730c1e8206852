"""Codes out, words at the edge: what each identity event and each refused sign-in is called.

The database and the protocol keep codes (identity_events.event, .reason; SignInRefused.reason);
pages show these words in the reader's language.
"""

from portal.core.i18n import N_

EVENTS = {
    "sso_sign_in": N_("Signed in through the company's provider"),
    "sso_joined": N_("Joined as a volunteer through the company's provider"),
    "sso_refused": N_("Sign-in through the provider refused"),
    "settings_saved": N_("Sign-in settings saved"),
    "settings_approved": N_("Sign-in settings approved"),
    "scim_created": N_("Created by the directory (SCIM)"),
    "scim_invited": N_("Invited by the directory (SCIM)"),
    "scim_invitation_revoked": N_("Invitation revoked by the directory (SCIM)"),
    "scim_updated": N_("Changed by the directory (SCIM)"),
    "scim_deactivated": N_("Deactivated by the directory (SCIM)"),
    "scim_reactivated": N_("Reactivated by the directory (SCIM)"),
    "deactivated": N_("Deactivated on the People page"),
    "reactivated": N_("Reactivated on the People page"),
    "made_manager": N_("Made a manager on the People page"),
    "token_created": N_("Directory token created"),
    "token_revoked": N_("Directory token revoked"),
}

# Each refused sign-in's page says what happened, and that nobody was signed in.
REASONS = {
    "denied": N_("The sign-in was declined at your company's identity provider."),
    "provider_error": N_("Your company's identity provider answered with an error instead of a sign-in."),
    "state_unknown": N_(
        "This sign-in answer was already used, or it did not start in this browser. "
        "An answer from the provider counts once."
    ),
    "request_expired": N_("The sign-in took longer than 10 minutes between this page and the provider."),
    "provider_unreachable": N_("The portal could not reach your company's identity provider."),
    "not_configured": N_("Your company's sign-in through its identity provider is not set up, or not approved yet."),
    "token_refused": N_(
        "Your company's identity provider did not accept the portal's request: the client ID or secret "
        "entered in the portal may be out of date."
    ),
    "bad_signature": N_("The provider's answer was not signed with the provider's published keys."),
    "wrong_issuer": N_("The answer came from another issuer than the one your company set up."),
    "wrong_audience": N_("The provider's answer was meant for another application, not this portal."),
    "token_expired": N_("The provider's answer had expired before it arrived."),
    "nonce_mismatch": N_("The provider's answer did not belong to this sign-in."),
    "invalid_token": N_("The provider's answer was not a valid sign-in."),
    "no_email": N_("The provider did not tell the portal your email address."),
    "email_unverified": N_("The provider says your email address is not verified."),
    "domain_not_vouched": N_("Your company's provider does not vouch for addresses at this domain."),
    "other_company": N_("This address belongs to an account of another company in the portal."),
    "deactivated": N_("Your account in the portal is deactivated. Ask a manager of your company."),
    "no_account": N_(
        "You have no account in the portal yet, and your company lets colleagues join by invitation only. "
        "Ask a manager of your company for an invitation."
    ),
}
