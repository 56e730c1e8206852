"""The partner portal: the application factory."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from portal.core.i18n import N_
from portal.core.resources import STATIC_DIR, TEMPLATES_DIR
from portal.core.settings import Settings

if TYPE_CHECKING:
    from flask import Flask

# Flask is imported inside the factory, not here: the worker imports portal.outbox, and the email
# engine must load without the web framework.

SESSION_LIFETIME = timedelta(hours=12)

ERROR_MESSAGES = {
    400: (N_("Bad request"), N_("The request could not be understood.")),
    403: (N_("Not allowed"), N_("Your account cannot see this page.")),
    404: (N_("Not found"), N_("There is nothing at this address.")),
    405: (N_("Not allowed"), N_("That action is not available here.")),
    413: (N_("Too large"), N_("That submission is too large.")),
    429: (N_("Too many attempts"), N_("Too many attempts in a short time. Wait a few minutes, then try again.")),
    500: (N_("Something went wrong"), N_("The error was logged. Please try again in a moment.")),
    503: (
        N_("The database is unavailable"),
        N_("The portal cannot reach its database just now. Nothing was changed. Please try again shortly."),
    ),
    # A write whose commit could not be confirmed: never replayed, so the person must look.
    "ambiguous": (
        N_("We could not confirm that was saved"),
        N_("The database stopped answering while saving. Check the page before trying again: it may have been saved."),
    ),
}


# Who each demo person is, as the sign-in page names them (in its reader's language).
DEMO_WHO = {
    "admin": N_("Admin (%(organisation)s)"),
    "manager": N_("Manager (%(organisation)s)"),
    "employee": N_("Volunteer (%(name)s)"),
}


def _demo_logins(settings: Settings) -> tuple[tuple[str, dict, str, str], ...]:
    """(who, its values, email, password) of the seeded demo people, for the sign-in page: `who` is
    a catalogue message the page translates with its values.

    Development only: elsewhere these accounts must not exist, and naming them would invite guessing.
    """
    if settings.portal_env != "development":
        return ()
    from portal.seed import DEMO_COMPANY, DEMO_EMPLOYEES, DEMO_LOGINS, DEMO_PASSWORD

    people = [
        (DEMO_WHO[role], {"organisation": "TEEI" if role == "admin" else DEMO_COMPANY}, email)
        for email, role, _ in DEMO_LOGINS
    ]
    people += [(DEMO_WHO["employee"], {"name": name}, email) for email, name, *_ in DEMO_EMPLOYEES[:1]]
    return tuple((who, values, email, DEMO_PASSWORD) for who, values, email in people)


def create_app(config: dict | None = None, settings: Settings | None = None) -> Flask:
    """Build the web app. Settings come from the environment unless a test passes its own."""
    from flask import Flask

    from portal.context import build_context
    from portal.web.extensions import EXTENSION_KEY

    settings = settings or Settings.from_env()
    app = Flask(
        __name__,
        instance_path=str(settings.instance_path),
        template_folder=str(TEMPLATES_DIR),
        static_folder=str(STATIC_DIR),
    )
    app.config.update(
        SECRET_KEY=settings.secret_key,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=settings.is_deployed,
        # Flask refuses a session cookie signed longer ago than this; each request signs it anew,
        # so it is how long an idle session lasts (Flask's default is 31 days).
        PERMANENT_SESSION_LIFETIME=SESSION_LIFETIME,
        REMEMBER_COOKIE_HTTPONLY=True,
        REMEMBER_COOKIE_SECURE=settings.is_deployed,
        MAX_CONTENT_LENGTH=1024 * 1024,
        RATELIMIT_STORAGE_URI=settings.redis_url,
        RATELIMIT_STORAGE_OPTIONS={"socket_timeout": 2, "socket_connect_timeout": 2},
        RATELIMIT_KEY_PREFIX="portal-limits",
        # Sign-in and the public forms keep working while Redis is down (their emails are published
        # later by the relay), and their per-client limits go on counting in each process's memory:
        # for the outage, a client may make its limit once per web process rather than once in all.
        # The per-address slow-down of sign-in counts in the database (portal/auth/throttle.py).
        RATELIMIT_IN_MEMORY_FALLBACK_ENABLED=True,
        RATELIMIT_SWALLOW_ERRORS=True,
    )
    app.config["DEMO_LOGINS"] = _demo_logins(settings)
    if config:
        app.config.update(config)
    # Short Redis timeouts: an outage must not hang a web request.
    app.extensions[EXTENSION_KEY] = build_context(settings, redis_timeout=2)

    _init_extensions(app, settings)
    _register_blueprints(app)
    _mount_lean_apps(app)
    from portal.web.observability import init_operations  # logs, request IDs, proxies, /metrics, /readyz

    init_operations(app, settings)
    _register_error_pages(app)
    _set_security_headers(app, hsts=settings.is_deployed)

    from portal.cli import register_commands

    register_commands(app)
    return app


def _init_extensions(app: Flask, settings) -> None:
    from flask_babel import lazy_gettext

    from portal.auth.queries import load_session_user
    from portal.web.access import enforce_declared_access
    from portal.web.extensions import csrf, limiter, login_manager, portal_context
    from portal.web.filters import init_template_filters
    from portal.web.forms import refuse_file_uploads
    from portal.web.i18n import init_i18n

    csrf.init_app(app)
    limiter.init_app(app)
    login_manager.init_app(app)
    login_manager.login_view = "auth.login"
    login_manager.login_message = lazy_gettext("Please sign in to see that page.")
    login_manager.user_loader(lambda session_id: load_session_user(portal_context().db, session_id))
    app.before_request(refuse_file_uploads)
    app.before_request(enforce_declared_access)
    init_template_filters(app, settings)
    init_i18n(app, settings)


def _register_blueprints(app: Flask) -> None:
    """Every area's pages, and the menu links the layout shows to each audience."""
    from portal.account.routes import bp as account
    from portal.admin.routes import bp as admin
    from portal.applications.routes import bp as applications
    from portal.auth.routes import bp as auth
    from portal.campaigns.routes import bp as campaigns
    from portal.campaigns.unsubscribe import bp as unsubscribe
    from portal.console.routes import bp as console
    from portal.demo.routes import bp as demo
    from portal.invitations.routes import bp as invitations
    from portal.main.routes import bp as main
    from portal.people.routes import bp as people
    from portal.privacy.routes import bp as privacy
    from portal.report_emails.routes import bp as report_emails
    from portal.reports.routes import bp as reports
    from portal.sso.routes import bp as sso
    from portal.suppressions.routes import bp as suppressions

    for blueprint in (
        auth,
        account,
        main,
        reports,
        report_emails,
        applications,
        demo,
        invitations,
        people,
        privacy,
        suppressions,
        campaigns,
        unsubscribe,
        console,
        sso,
    ):
        app.register_blueprint(blueprint)
    app.register_blueprint(admin, url_prefix="/admin")

    nav = {
        "admin": [
            ("applications.admin_list", N_("Applications")),
            ("admin.demo_requests", N_("Demo requests")),
            ("suppressions.index", N_("Suppressions")),
            ("campaigns.index", N_("Campaigns")),
            ("console.index", N_("Outbox")),
            ("privacy.find_person", N_("Privacy")),
        ],
        "manager": [
            ("reports.index", N_("Report")),
            ("report_emails.subscription", N_("Report emails")),
            ("invitations.index", N_("Invitations")),
            ("people.index", N_("People")),
            ("sso.settings", N_("Sign-in")),
        ],
        "public": [("applications.apply", N_("Become a partner")), ("demo.request_demo", N_("Request a demo"))],
    }
    app.context_processor(lambda: {f"{audience}_nav": links for audience, links in nav.items()})


def _mount_lean_apps(app: Flask) -> None:
    """Receipts (POST /webhooks/resend), attendance (POST /api/attendance) and SCIM (/scim/v2) run in lean apps of
    their own, without sessions, CSRF or the page layout: see portal/webhooks/app.py."""
    from werkzeug.middleware.dispatcher import DispatcherMiddleware

    from portal.attendance.app import MOUNT_POINT as ATTENDANCE_MOUNT_POINT
    from portal.attendance.app import create_api_app
    from portal.scim.app import MOUNT_POINT as SCIM_MOUNT_POINT
    from portal.scim.app import create_scim_app
    from portal.web.extensions import EXTENSION_KEY
    from portal.webhooks.app import MOUNT_POINT as RECEIPTS_MOUNT_POINT
    from portal.webhooks.app import create_webhook_app

    context = app.extensions[EXTENSION_KEY]
    mounts = {
        RECEIPTS_MOUNT_POINT: create_webhook_app(context, testing=app.testing).wsgi_app,
        ATTENDANCE_MOUNT_POINT: create_api_app(context, testing=app.testing).wsgi_app,
        SCIM_MOUNT_POINT: create_scim_app(context, testing=app.testing).wsgi_app,
    }
    app.wsgi_app = DispatcherMiddleware(app.wsgi_app, mounts)


# No inline script anywhere, so scripts come only from our own origin. Style attributes are allowed
# (style-src-attr) because templates use a few for layout; <style> elements are not.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "style-src-attr 'unsafe-inline'",
        "img-src 'self' data:",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",  # frame-ancestors for browsers that predate CSP 2
    "X-Content-Type-Options": "nosniff",
    # Links in emails carry tokens; no page ever tells another site which URL it came from.
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
}
HSTS = "max-age=31536000; includeSubDomains"


def _set_security_headers(app: Flask, *, hsts: bool) -> None:
    """The same headers on every page of the web app, HSTS outside development (staging and production are served over HTTPS).

    A small after_request rather than flask-talisman: these are fixed strings, with no per-request
    nonce to compute, and Talisman would also redirect to HTTPS and rewrite the session cookie
    settings that create_app already sets per environment. The lean apps (webhooks, attendance API)
    answer JSON to servers, not browsers, and send a set of their own (portal/web/lean_app.py).
    """
    headers = {**SECURITY_HEADERS, **({"Strict-Transport-Security": HSTS} if hsts else {})}

    def add_headers(response):
        for name, value in headers.items():
            response.headers.setdefault(name, value)
        return response

    app.after_request(add_headers)


def _register_error_pages(app: Flask) -> None:
    from flask import g, render_template
    from flask_babel import gettext
    from flask_wtf.csrf import CSRFError

    from portal.core.db import AmbiguousCommitError, DatabaseUnavailable
    from portal.web.extensions import login_manager

    def render_error(error):
        code = getattr(error, "code", 500) or 500
        title, message = map(gettext, ERROR_MESSAGES.get(code, ERROR_MESSAGES[500]))
        if getattr(error, "show_description", False):
            message = error.description
        if isinstance(error, CSRFError):
            title = gettext("Form expired")
            message = gettext("The form was out of date or incomplete. Go back, reload it and try again.")
        return render_template("errors/error.html", title=title, message=message, code=code), code

    def database_unavailable(error):
        # The layout asks who is signed in, which needs the database: the page is shown as to a visitor.
        g._login_user = login_manager.anonymous_user()
        title, message = map(gettext, ERROR_MESSAGES[503])
        return render_template("errors/error.html", title=title, message=message, code=503), 503, {"Retry-After": "30"}

    def outcome_unknown(error):
        title, message = map(gettext, ERROR_MESSAGES["ambiguous"])
        return render_template("errors/error.html", title=title, message=message, code=503), 503

    for code in (code for code in ERROR_MESSAGES if isinstance(code, int) and code != 503):
        app.register_error_handler(code, render_error)
    app.register_error_handler(CSRFError, render_error)
    app.register_error_handler(DatabaseUnavailable, database_unavailable)
    app.register_error_handler(AmbiguousCommitError, outcome_unknown)
