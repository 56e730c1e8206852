"""The OpenID Connect protocol, as the portal speaks it to a company's provider (Authlib as the client).

Discovery, the authorization request (code flow with PKCE S256, state and nonce), the code exchange,
and the checks on the ID token: signature against the provider's published keys, issuer, audience
(and `azp` when there are several), expiry and issue time against the caller's `now`, and the nonce.
Every way it can go wrong is a `SignInRefused` with a reason code (REASONS in portal/sso/words.py);
nothing here signs anyone in, reads a request or logs a secret.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

import requests
from authlib.integrations.base_client import OAuthError
from authlib.integrations.requests_client import OAuth2Session
from authlib.oauth2 import OAuth2Error
from joserfc import jwt
from joserfc.errors import ClaimError, ExpiredTokenError, JoseError
from joserfc.jwk import KeySet

SCOPE = "openid email profile"
TIMEOUT_SECONDS = 10
# Clock skew allowed between the portal and the provider when reading exp and iat.
LEEWAY_SECONDS = 60
SIGNING_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]
_CLAIM_REASONS = {"iss": "wrong_issuer", "aud": "wrong_audience", "nonce": "nonce_mismatch", "azp": "wrong_audience"}


class SignInRefused(Exception):
    """The sign-in cannot go on; `reason` is a code from portal/sso/words.py's REASONS."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Discovery:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str


def issuer_allowed(issuer: str, *, development: bool) -> bool:
    """An issuer is an https URL; plain http only for a loopback host in development (a test provider)."""
    parts = urlsplit(issuer)
    if parts.scheme == "https" and parts.hostname:
        return not parts.query and not parts.fragment
    if parts.scheme != "http" or not development or not parts.hostname:
        return False
    if parts.hostname == "localhost":
        return True
    try:
        return ipaddress.ip_address(parts.hostname).is_loopback
    except ValueError:
        return False


def discover(issuer: str) -> Discovery:
    """The provider's metadata, from `{issuer}/.well-known/openid-configuration`; its issuer must be
    exactly the one configured (OpenID Connect Discovery 1.0, section 4.3)."""
    try:
        answer = requests.get(issuer.rstrip("/") + "/.well-known/openid-configuration", timeout=TIMEOUT_SECONDS)
        answer.raise_for_status()
        document = answer.json()
    except (requests.RequestException, ValueError):
        raise SignInRefused("provider_unreachable") from None
    if not isinstance(document, dict) or document.get("issuer") != issuer:
        raise SignInRefused("wrong_issuer")
    try:
        return Discovery(
            issuer=document["issuer"],
            authorization_endpoint=document["authorization_endpoint"],
            token_endpoint=document["token_endpoint"],
            jwks_uri=document["jwks_uri"],
        )
    except KeyError:
        raise SignInRefused("provider_unreachable") from None


def authorization_url(
    discovery: Discovery, *, client_id: str, redirect_uri: str, state: str, nonce: str, code_verifier: str
) -> str:
    session = OAuth2Session(client_id, redirect_uri=redirect_uri, scope=SCOPE, code_challenge_method="S256")
    url, _state = session.create_authorization_url(
        discovery.authorization_endpoint, state=state, nonce=nonce, code_verifier=code_verifier
    )
    return url


def exchange_code(
    discovery: Discovery, *, client_id: str, client_secret: str, redirect_uri: str, code: str, code_verifier: str
) -> str:
    """The ID token the provider gives for the authorization code (client_secret_basic, with the PKCE verifier)."""
    session = OAuth2Session(
        client_id,
        client_secret,
        redirect_uri=redirect_uri,
        scope=SCOPE,
        code_challenge_method="S256",
        default_timeout=TIMEOUT_SECONDS,
    )
    try:
        token = session.fetch_token(discovery.token_endpoint, code=code, code_verifier=code_verifier)
    except (OAuthError, OAuth2Error, requests.RequestException, ValueError):
        raise SignInRefused("token_refused") from None
    id_token = token.get("id_token")
    if not id_token:
        raise SignInRefused("token_refused")
    return id_token


def provider_keys(discovery: Discovery) -> dict:
    try:
        answer = requests.get(discovery.jwks_uri, timeout=TIMEOUT_SECONDS)
        answer.raise_for_status()
        keys = answer.json()
    except (requests.RequestException, ValueError):
        raise SignInRefused("provider_unreachable") from None
    if not isinstance(keys, dict) or not isinstance(keys.get("keys"), list):
        raise SignInRefused("provider_unreachable")
    return keys


def check_id_token(id_token: str, *, keys: dict, issuer: str, client_id: str, nonce: str, now: datetime) -> dict:
    """The ID token's claims, once its signature, issuer, audience, expiry, issue time and nonce hold at `now`."""
    try:
        token = jwt.decode(id_token, KeySet.import_key_set(keys), algorithms=SIGNING_ALGORITHMS)
    except (JoseError, ValueError, TypeError):
        raise SignInRefused("bad_signature") from None
    registry = jwt.JWTClaimsRegistry(
        now=int(now.timestamp()),
        leeway=LEEWAY_SECONDS,
        iss={"essential": True, "value": issuer},
        sub={"essential": True},
        aud={"essential": True, "value": client_id},
        exp={"essential": True},
        iat={"essential": True},
        nonce={"essential": True, "value": nonce},
    )
    claims = token.claims
    try:
        registry.validate(claims)
    except ExpiredTokenError:
        raise SignInRefused("token_expired") from None
    except ClaimError as error:
        raise SignInRefused(_CLAIM_REASONS.get(error.claim, "invalid_token")) from None
    audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
    if len(audiences) > 1 and claims.get("azp") != client_id:
        raise SignInRefused("wrong_audience")
    if int(claims["iat"]) > now.timestamp() + LEEWAY_SECONDS:
        raise SignInRefused("invalid_token")  # issued in the future: a clock or a token to distrust
    return claims
