from flask import Blueprint

bp = Blueprint("applications", __name__)

from portal.applications import routes  # noqa: E402,F401  (registers the views on bp)
