"""POST /api/attendance: signed session records from the programme platforms.

Answers 200, 400, 401 or 413, and 503 when the database cannot take the delivery (the platform
sends it again; a committed delivery is never applied twice). Never a 500. Logs carry the error's
class only: bodies hold volunteers' addresses, and the secret is never echoed.
"""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify, request
from werkzeug.exceptions import HTTPException

from portal.attendance import signature
from portal.attendance.operations import DeliveryIdReused, record_delivery
from portal.attendance.validation import InvalidSessions, MalformedBody, parse_request
from portal.web.access import public
from portal.web.extensions import portal_context

bp = Blueprint("attendance", __name__)
RETRY_AFTER_SECONDS = "30"


@bp.post("/attendance")
@public  # the platforms sign their requests instead
def receive_attendance():
    try:
        body = request.get_data(cache=False)
        webhook_id = signature.verify(portal_context().settings.attendance_webhook_secret, body, request.headers)
        records = parse_request(body)
        ctx = portal_context()
        counts, replayed = record_delivery(
            ctx.db, webhook_id=webhook_id, body=body, records=records, secret_key=ctx.settings.secret_key
        )
    except signature.SignatureError as error:
        current_app.logger.warning("attendance refused: signature not verified (%s)", error)
        return jsonify(error="invalid_signature"), 401
    except MalformedBody as error:
        current_app.logger.warning("attendance refused: %s", error)
        return jsonify(error="malformed_body", message=str(error)), 400
    except InvalidSessions as error:
        current_app.logger.warning("attendance refused: %s", error)
        errors = [{"index": e.position, "reason": e.reason} for e in error.errors]
        return jsonify(error="invalid_sessions", errors=errors), 400
    except DeliveryIdReused:
        current_app.logger.warning("attendance refused: a webhook-id delivered before came with another body")
        message = "This webhook-id was delivered before with another body; send new content under a new id."
        return jsonify(error="webhook_id_reused", message=message), 409
    except HTTPException:
        raise  # 413 for a body over the limit: answered by the app's handler
    except Exception as error:
        current_app.logger.error("attendance not stored, the platform will resend it: %s", type(error).__name__)
        response = jsonify(error="try_again_later")
        response.headers["Retry-After"] = RETRY_AFTER_SECONDS
        return response, 503
    if replayed:
        current_app.logger.info("attendance delivery replayed; nothing changed")
    return jsonify(counts.as_dict()), 200
