from flask import Blueprint

bp = Blueprint("company", __name__)

from portal.company import routes  # noqa: E402,F401
