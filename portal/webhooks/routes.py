"""The receipt endpoint. It answers every input with 200, 400 or 401, never a 500.

A 2xx tells the provider to stop redelivering, so it is sent only once the receipt is committed
(or was committed before). When the database cannot take the receipt, the answer is 503 and the
provider redelivers it later; that is safe because the receipt applies at most once. Logs carry
the error's class only: bodies hold addresses.
"""
from flask import current_app, jsonify, request
from werkzeug.exceptions import HTTPException

from portal.access import public
from portal.services import get_db, get_settings
from portal.webhooks import bp
from portal.webhooks.receipts import MalformedReceipt, SignatureError
from portal.webhooks.service import handle_receipt

RETRY_AFTER_SECONDS = "30"


@bp.post("/resend")
@public  # the provider signs its requests instead
def resend_receipt():
    try:
        body = request.get_data(cache=False)
        outcome = handle_receipt(get_db(), get_settings(), body, request.headers)
    except SignatureError as error:
        current_app.logger.warning("receipt refused: signature not verified (%s)", error)
        return jsonify(error="invalid_signature"), 401
    except MalformedReceipt as error:
        current_app.logger.warning("receipt refused: %s", error)
        return jsonify(error="malformed_receipt"), 400
    except HTTPException:
        raise  # e.g. 413 for a body over MAX_CONTENT_LENGTH: Flask answers it
    except Exception as error:
        current_app.logger.error("receipt not stored, the provider will redeliver it: %s", type(error).__name__)
        response = jsonify(error="try_again_later")
        response.headers["Retry-After"] = RETRY_AFTER_SECONDS
        return response, 503
    return jsonify(outcome=outcome), 200
