"""The suppression list: addresses the portal must not email, and who put them there."""
from flask import Blueprint

bp = Blueprint("suppressions", __name__, url_prefix="/admin/suppressions")

from portal.suppressions import routes  # noqa: E402,F401  (registers the views on bp)
