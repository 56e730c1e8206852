from datetime import date

from flask import Blueprint, current_app, flash, jsonify, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_login import current_user

from portal.account import set_language
from portal.core.i18n import LANGUAGES
from portal.privacy import retention_rules
from portal.web.access import public
from portal.web.extensions import portal_context
from portal.web.i18n import LANGUAGE_COOKIE
from portal.web.redirects import same_site_path

bp = Blueprint("main", __name__)

LANDING = {"admin": "admin.dashboard", "manager": "reports.index", "employee": "reports.my_hours"}


@bp.get("/")
@public
def home():
    if not current_user.is_authenticated:
        # A visitor learns what the portal is before being asked for a password.
        return render_template("main/home.html")
    return redirect(url_for(LANDING[current_user.role]))


# When the accessibility statement was prepared and last reviewed (it says so): move `REVIEWED`
# whenever the statement's list of problems changes.
STATEMENT_PREPARED = date(2026, 12, 7)
STATEMENT_REVIEWED = date(2026, 12, 7)


@bp.get("/accessibility")
@public
def accessibility():
    """The accessibility statement, linked from every page's footer."""
    return render_template("main/accessibility.html", prepared=STATEMENT_PREPARED, reviewed=STATEMENT_REVIEWED)


@bp.get("/privacy")
@public
def privacy_notice():
    """What the portal stores about people and why, with the retention periods as configured."""
    settings = portal_context().settings
    return render_template(
        "main/privacy_notice.html",
        retention_rules=retention_rules(settings),
        outbox_days=settings.outbox_retention_days,
        receipt_days=settings.receipt_retention_days,
    )


@bp.get("/healthz")
@public
def healthz():
    ctx = portal_context()
    checks = {}
    try:
        ctx.db.ping()
        checks["database"] = "ok"
    except Exception:
        checks["database"] = "unavailable"
    try:
        ctx.redis.ping()
        checks["redis"] = "ok"
    except Exception:
        checks["redis"] = "unavailable"
    healthy = all(state == "ok" for state in checks.values())
    failing = [part for part, state in checks.items() if state != "ok"]
    body = {"status": "ok" if healthy else "unavailable", "checks": checks}
    if failing:
        body["failing"] = failing
    return jsonify(body), 200 if healthy else 503


@bp.post("/language")
@public
def language():
    """The language switch: the same page again, in the language chosen. A signed-in person's choice
    is theirs from then on (pages and email); a visitor's is kept in a cookie for a year."""
    back = same_site_path(request.form.get("next")) or url_for("main.home")
    chosen = request.form.get("language", "")
    if chosen not in LANGUAGES:
        flash(_("Choose one of the languages offered."), "error")
        return redirect(back)
    if current_user.is_authenticated:
        set_language(portal_context().db, user_id=current_user.id, language=chosen)
    answer = redirect(back)
    secure = current_app.config["SESSION_COOKIE_SECURE"]
    answer.set_cookie(LANGUAGE_COOKIE, chosen, max_age=365 * 24 * 3600, httponly=True, samesite="Lax", secure=secure)
    return answer
