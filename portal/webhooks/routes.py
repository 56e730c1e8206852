"""The receipt endpoint: verify the signature, hand the event to the email engine, answer.

It answers 200, 400, 401 or 413 (a body over the app's limit), and 503 when the database cannot
take the receipt, never a 500. A 2xx tells the provider to stop redelivering, so it is sent only
once the receipt is committed (or was committed before); after a 503 the provider redelivers
later, which is safe because a receipt applies at most once. Logs carry the error's class only:
bodies hold addresses.
"""

import json

from flask import Blueprint, Response, current_app, request
from werkzeug.exceptions import HTTPException

from portal.access import public
from portal.extensions import portal_context
from portal.outbox.receipt_events import MalformedReceipt
from portal.outbox.receipts import DUPLICATE, OUTCOMES, apply_receipt_event
from portal.webhooks.signature import SignatureError, verify_signature

bp = Blueprint("webhooks", __name__)
RETRY_AFTER_SECONDS = "30"
# Every answer's body, encoded once: a receipt's own work is a few statements, and building JSON
# per request was a noticeable part of what remained.
_BODIES = {
    **{outcome: json.dumps({"outcome": outcome}, separators=(",", ":")).encode() for outcome in (*OUTCOMES, DUPLICATE)},
    **{
        error: json.dumps({"error": error}, separators=(",", ":")).encode()
        for error in ("invalid_signature", "malformed_receipt", "try_again_later")
    },
}


def _answer(key: str, status: int) -> Response:
    return Response(_BODIES[key], status=status, mimetype="application/json")


@bp.post("/resend")
@public  # the provider signs its requests instead
def resend_receipt():
    ctx = portal_context()
    try:
        body = request.get_data(cache=False)
        event_id = verify_signature(ctx.settings.resend_webhook_secret, body, request.headers)
        outcome = apply_receipt_event(ctx.db, event_id, body, environment=ctx.settings.portal_env)
    except SignatureError as error:
        current_app.logger.warning("receipt refused: signature not verified (%s)", error)
        return _answer("invalid_signature", 401)
    except MalformedReceipt as error:
        current_app.logger.warning("receipt refused: %s", error)
        return _answer("malformed_receipt", 400)
    except HTTPException:
        raise  # e.g. 413 for a body over MAX_CONTENT_LENGTH: Flask answers it
    except Exception as error:
        current_app.logger.error("receipt not stored, the provider will redeliver it: %s", type(error).__name__)
        response = _answer("try_again_later", 503)
        response.headers["Retry-After"] = RETRY_AFTER_SECONDS
        return response
    return _answer(outcome, 200)
