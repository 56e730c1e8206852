"""The provider's receipts: POST /webhooks/resend."""
from flask import Blueprint

bp = Blueprint("webhooks", __name__, url_prefix="/webhooks")

from portal.webhooks import routes  # noqa: E402,F401  (registers the views on bp)
