"""Who may see each page, declared on the view and enforced in one place.

Every endpoint must carry a declaration (`public` or `roles_required`); `enforce_declared_access`
refuses any endpoint that has none, so a new view cannot be forgotten. Company scoping lives here
too: views never take a company ID from the URL or the form, only from `current_company_id()`.
"""

from __future__ import annotations

from functools import wraps

from flask import abort, current_app, redirect, request, url_for
from flask_login import current_user

PUBLIC = "public"
ROLES = ("admin", "manager", "employee")


def public(view):
    view.access = PUBLIC
    return view


def roles_required(*roles: str):
    unknown = set(roles) - set(ROLES)
    if unknown:
        raise ValueError(f"unknown roles: {sorted(unknown)}")

    def decorate(view):
        @wraps(view)
        def guarded(*args, **kwargs):
            if not current_user.is_authenticated:
                return redirect(url_for("auth.login", next=request.full_path.rstrip("?")))
            if current_user.role not in roles:
                abort(403)
            return view(*args, **kwargs)

        guarded.access = tuple(roles)
        return guarded

    return decorate


def enforce_declared_access():
    """before_request hook: an endpoint without a declaration is never served."""
    if request.endpoint is None:
        return None  # 404/405 are answered by Flask itself
    if request.endpoint == "static":
        return None
    view = current_app.view_functions.get(request.endpoint)
    if getattr(view, "access", None) is None:
        current_app.logger.error("endpoint %s declares no access rule; refused", request.endpoint)
        abort(403)
    return None


def current_company_id() -> int:
    """The signed-in user's company; the only source of company scope for a request."""
    company_id = getattr(current_user, "company_id", None)
    if company_id is None:
        abort(403)
    return company_id
