from flask import Blueprint, abort, render_template
from flask_login import current_user

from portal.access import current_company_id, roles_required
from portal.company import queries
from portal.extensions import portal_context

bp = Blueprint("company", __name__)


@bp.get("/company")
@roles_required("manager")
def overview():
    employees = queries.employee_hours(portal_context().db, company_id=current_company_id())
    total = sum(e.hours for e in employees)
    return render_template("company/overview.html", employees=employees, total_hours=total)


@bp.get("/company/employees/<int:employee_id>")
@roles_required("manager")
def employee(employee_id: int):
    found = queries.employee_sessions(portal_context().db, company_id=current_company_id(), employee_id=employee_id)
    if found is None:
        abort(404)  # another company's employee looks exactly like a missing one
    employee, sessions = found
    return render_template("company/employee.html", employee=employee, sessions=sessions)


@bp.get("/me/hours")
@roles_required("employee")
def my_hours():
    found = queries.employee_sessions(portal_context().db, company_id=current_company_id(), employee_id=current_user.id)
    employee, sessions = found if found else (None, [])
    return render_template("company/my_hours.html", employee=employee, sessions=sessions)
