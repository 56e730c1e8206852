from flask import Blueprint, render_template

from portal.access import roles_required
from portal.admin import queries
from portal.extensions import portal_context

bp = Blueprint("admin", __name__)


@bp.get("/")
@roles_required("admin")
def dashboard():
    return render_template("admin/dashboard.html", companies=queries.company_summaries(portal_context().db))
