"""The partner portal: the application factory."""
from __future__ import annotations

from typing import TYPE_CHECKING

from portal.settings import PROJECT_ROOT, Settings

if TYPE_CHECKING:
    from flask import Flask

# Flask is imported inside the factory, not here: the worker imports portal.outbox, and the email
# engine must load without the web framework.


def create_app(config: dict | None = None, settings: Settings | None = None) -> Flask:
    """Build the web app. Settings come from the environment unless a test passes its own."""
    from flask import Flask

    from portal.context import PortalContext

    settings = settings or Settings.from_env()
    app = Flask(
        __name__,
        template_folder=str(PROJECT_ROOT / "templates"),
        static_folder=str(PROJECT_ROOT / "static"),
        instance_path=str(settings.instance_path),
    )
    app.config.update(
        SECRET_KEY=settings.secret_key,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=settings.is_production,
        REMEMBER_COOKIE_HTTPONLY=True,
        REMEMBER_COOKIE_SECURE=settings.is_production,
        MAX_CONTENT_LENGTH=1024 * 1024,
        RATELIMIT_STORAGE_URI=settings.redis_url,
        RATELIMIT_STORAGE_OPTIONS={"socket_timeout": 2, "socket_connect_timeout": 2},
        RATELIMIT_KEY_PREFIX="portal-limits",
        RATELIMIT_SWALLOW_ERRORS=True,
    )
    if config:
        app.config.update(config)
    # Short Redis timeouts: an outage must not hang a web request.
    app.extensions["portal"] = PortalContext.from_settings(settings, redis_timeout=2)
    # Areas add their pages to the menu with add_nav_link; the layout reads these lists.
    app.config.setdefault("NAV", {"admin": [], "manager": [], "public": []})
    app.context_processor(lambda: {f"{role}_nav": links for role, links in app.config["NAV"].items()})

    _init_extensions(app)
    _register_blueprints(app)
    _register_error_pages(app)

    from portal.cli import register_commands

    register_commands(app)
    return app


def _init_extensions(app: Flask) -> None:
    from portal.access import enforce_declared_access
    from portal.auth.service import load_user
    from portal.extensions import csrf, limiter, login_manager
    from portal.services import get_db

    csrf.init_app(app)
    limiter.init_app(app)
    login_manager.init_app(app)
    login_manager.login_view = "auth.login"
    login_manager.login_message = "Please sign in to see that page."
    login_manager.user_loader(lambda user_id: load_user(get_db(), int(user_id)))
    app.before_request(enforce_declared_access)


def _register_blueprints(app: Flask) -> None:
    from portal import admin, auth, company, main

    app.register_blueprint(auth.bp)
    app.register_blueprint(main.bp)
    app.register_blueprint(company.bp)
    app.register_blueprint(admin.bp, url_prefix="/admin")

    from portal import applications, demo

    app.register_blueprint(applications.bp)  # /apply, and /admin/applications for admins
    app.register_blueprint(demo.bp)
    add_nav_link(app, "admin", "applications.admin_list", "Applications")
    add_nav_link(app, "public", "applications.apply", "Become a partner")
    add_nav_link(app, "public", "demo.request_demo", "Request a demo")

    from portal import invitations

    app.register_blueprint(invitations.bp)
    add_nav_link(app, "manager", "invitations.index", "Invitations")

    from portal import suppressions, webhooks

    # POST /webhooks/resend runs in its own lean app: see portal/webhooks/__init__.py.
    from werkzeug.middleware.dispatcher import DispatcherMiddleware

    receipts = webhooks.create_webhook_app(app.extensions["portal"], testing=app.testing)
    app.wsgi_app = DispatcherMiddleware(app.wsgi_app, {webhooks.MOUNT_POINT: receipts.wsgi_app})
    app.register_blueprint(suppressions.bp)
    add_nav_link(app, "admin", "suppressions.index", "Suppressions")


def _register_error_pages(app: Flask) -> None:
    from flask import render_template
    from flask_wtf.csrf import CSRFError

    messages = {
        400: ("Bad request", "The request could not be understood."),
        403: ("Not allowed", "Your account cannot see this page."),
        404: ("Not found", "There is nothing at this address."),
        405: ("Not allowed", "That action is not available here."),
        413: ("Too large", "That submission is too large."),
        429: ("Too many attempts", "Too many attempts in a short time. Wait a few minutes, then try again."),
        500: ("Something went wrong", "The error was logged. Please try again in a moment."),
    }

    def render_error(error):
        code = getattr(error, "code", 500) or 500
        title, message = messages.get(code, messages[500])
        if isinstance(error, CSRFError):
            title, message = "Form expired", "The form was out of date or incomplete. Go back, reload it and try again."
        return render_template("errors/error.html", title=title, message=message, code=code), code

    for code in messages:
        app.register_error_handler(code, render_error)
    app.register_error_handler(CSRFError, render_error)


def add_nav_link(app: Flask, audience: str, endpoint: str, label: str) -> None:
    app.config["NAV"][audience].append((endpoint, label))
