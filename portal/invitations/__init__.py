from flask import Blueprint

bp = Blueprint("invitations", __name__, url_prefix="/invitations")

from portal.invitations import routes  # noqa: E402,F401
