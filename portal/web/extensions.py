"""The web app's request-time handles: Flask extensions, created unbound and bound in the factory
with init_app, and the process's PortalContext as a request sees it."""

from __future__ import annotations

import hashlib
import ipaddress

from flask import current_app, request
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_login import LoginManager
from flask_wtf import CSRFProtect

from portal.outbox import PortalContext

csrf = CSRFProtect()
login_manager = LoginManager()


def client_network() -> str:
    """Rate-limit key for the client: its IPv4 address, or its IPv6 /64.

    One IPv6 subscriber is handed a whole /64 and picks addresses in it freely, so a limit per
    IPv6 address would stop nobody (sign-in's per-client limit, the public forms' limits).
    """
    address = get_remote_address()
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if parsed.version == 6 and parsed.ipv4_mapped is None:
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return address


limiter = Limiter(key_func=client_network, headers_enabled=True)
EXTENSION_KEY = "portal"


def portal_context() -> PortalContext:
    """Settings, database, Redis and the email engine's handles, built once by the factory."""
    return current_app.extensions[EXTENSION_KEY]


def submitted_email_key() -> str:
    """Rate-limit key for the address typed into a form.

    Hashed, because limiter keys live in Redis and contact details never go there.
    """
    email = (request.form.get("email") or "").strip().lower()
    return "email:" + hashlib.sha256(email.encode()).hexdigest()[:32]
