"""The receipt endpoint: verify the signature, hand the event to the email engine, answer.

It answers 200, 400, 401 or 413 (a body over the app's limit), and 503 when the database cannot
take the receipt, never a 500. A 2xx tells the provider to stop redelivering, so it is sent only
once the receipt is committed (or was committed before); after a 503 the provider redelivers
later, which is safe because a receipt applies at most once. Logs carry the error's class only:
bodies hold addresses.

`answer_receipt` is the whole decision; the Flask view below and the WSGI fast path in app.py
(which serves the common request without Flask's per-request machinery) both call it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping

from flask import Blueprint, Response, current_app, request

from portal.core import clock
from portal.outbox.hear.receipts import DUPLICATE, OUTCOMES, MalformedReceipt, apply_receipt_event
from portal.web.access import public
from portal.web.extensions import portal_context
from portal.webhooks.signature import SignatureError, verify_signature

bp = Blueprint("webhooks", __name__)
RETRY_AFTER_SECONDS = "30"
# Every answer's body, encoded once: a receipt's own work is a few statements, and building JSON
# per request was a noticeable part of what remained.
ANSWER_BODIES = {
    **{outcome: json.dumps({"outcome": outcome}, separators=(",", ":")).encode() for outcome in (*OUTCOMES, DUPLICATE)},
    **{
        error: json.dumps({"error": error}, separators=(",", ":")).encode()
        for error in ("invalid_signature", "malformed_receipt", "try_again_later")
    },
}


def answer_receipt(context, body: bytes, headers: Mapping[str, str], log: logging.Logger) -> tuple[int, str]:
    """The HTTP status and the ANSWER_BODIES key for one receipt request's body and headers."""
    try:
        event_id = verify_signature(context.settings.resend_webhook_secret, body, headers)
        outcome = apply_receipt_event(
            context.db,
            event_id,
            body,
            environment=context.settings.portal_env,
            now=clock.utcnow(),
            secret_key=context.settings.secret_key,
        )
    except SignatureError as error:
        log.warning("receipt refused: signature not verified (%s)", error)
        return 401, "invalid_signature"
    except MalformedReceipt as error:
        log.warning("receipt refused: %s", error)
        return 400, "malformed_receipt"
    except Exception as error:
        log.error("receipt not stored, the provider will redeliver it: %s", type(error).__name__)
        return 503, "try_again_later"
    return 200, outcome


def extra_headers(status: int) -> list[tuple[str, str]]:
    return [("Retry-After", RETRY_AFTER_SECONDS)] if status == 503 else []


@bp.post("/resend")
@public  # the provider signs its requests instead
def resend_receipt():
    # A body over the app's limit raises 413 here, before any work: Flask answers it.
    body = request.get_data(cache=False)
    status, key = answer_receipt(portal_context(), body, request.headers, current_app.logger)
    return Response(ANSWER_BODIES[key], status=status, mimetype="application/json", headers=extra_headers(status))
