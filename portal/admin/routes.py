from flask import render_template

from portal.access import roles_required
from portal.admin import bp, service
from portal.services import get_db


@bp.get("/")
@roles_required("admin")
def dashboard():
    return render_template("admin/dashboard.html", companies=service.company_summaries(get_db()))
