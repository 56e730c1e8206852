from flask import Blueprint, jsonify, redirect, render_template, url_for
from flask_login import current_user

from portal.web.access import public
from portal.web.extensions import portal_context

bp = Blueprint("main", __name__)

LANDING = {"admin": "admin.dashboard", "manager": "reports.index", "employee": "reports.my_hours"}


@bp.get("/")
@public
def home():
    if not current_user.is_authenticated:
        # A visitor learns what the portal is before being asked for a password.
        return render_template("main/home.html")
    return redirect(url_for(LANDING[current_user.role]))


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
