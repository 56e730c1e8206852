"""Flask extensions, created unbound and bound to an app in the factory with init_app."""
import hashlib

from flask import request
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_login import LoginManager
from flask_wtf import CSRFProtect

csrf = CSRFProtect()
login_manager = LoginManager()
limiter = Limiter(key_func=get_remote_address, headers_enabled=True)


def submitted_email_key() -> str:
    """Rate-limit key for the address typed into a form.

    Hashed, because limiter keys live in Redis and contact details never go there.
    """
    email = (request.form.get("email") or "").strip().lower()
    return "email:" + hashlib.sha256(email.encode()).hexdigest()[:32]
