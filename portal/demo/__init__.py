from flask import Blueprint

bp = Blueprint("demo", __name__)

from portal.demo import routes  # noqa: E402,F401  (registers the views on bp)
