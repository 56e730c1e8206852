"""The web app's request-time handles: Flask extensions, created unbound and bound in the factory
with init_app, and the process's PortalContext as a request sees it."""

from __future__ import annotations

import hashlib

from flask import current_app, request
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_login import LoginManager
from flask_wtf import CSRFProtect

from portal.context import PortalContext

csrf = CSRFProtect()
login_manager = LoginManager()
limiter = Limiter(key_func=get_remote_address, headers_enabled=True)
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
