"""The web side of operations: request IDs, the proxies in front, /metrics and /readyz.

`init_operations(app, settings)` is called once by the app factory. /healthz (portal/main) stays
the shallow liveness check; /readyz says whether this instance can do its work: the database and
Redis answer, and some email worker has beaten recently (portal/core/heartbeat.py).
"""

from __future__ import annotations

import hmac
import time

from flask import Blueprint, Flask, Response, abort, jsonify, request
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
from werkzeug.middleware.proxy_fix import ProxyFix
from werkzeug.wsgi import ClosingIterator

from portal.core.heartbeat import STALE_AFTER_SECONDS, newest_heartbeat
from portal.core.log_context import new_request_id, outbox_id_var, request_id_var, safe_id
from portal.core.logs import configure_logging
from portal.core.periods import report_timezone
from portal.core.settings import Settings
from portal.outbox.operate.operator import ALL_SENDING, OutboxCollector, pauses
from portal.web.access import public
from portal.web.extensions import portal_context

bp = Blueprint("operations", __name__)
REQUEST_ID_HEADER = "X-Request-ID"


def init_operations(app: Flask, settings: Settings) -> None:
    """Logging in the configured format, /metrics and /readyz, request IDs, and the proxies.

    The WSGI wrappers go around everything, the lean apps at /webhooks and /api included, so their
    requests get an ID and their rate limits (if any) see the real client too."""
    configure_logging(settings.log_format)
    app.register_blueprint(bp)
    wsgi = RequestIds(app.wsgi_app, trust_header=settings.trusted_proxy_count > 0)
    if settings.trusted_proxy_count:
        # The client's address is the entry this many hops back in X-Forwarded-For, as each trusted
        # proxy appends the address it saw. Only the address: with the scheme taken from
        # X-Forwarded-Proto, requests would be "secure", and Flask-WTF then wants a Referer on every
        # POST, which our Referrer-Policy (no-referrer) never lets a browser send. Absolute links
        # come from PUBLIC_BASE_URL and cookies are Secure by PORTAL_ENV, so nothing needs the scheme.
        wsgi = ProxyFix(wsgi, x_for=settings.trusted_proxy_count, x_proto=0, x_host=0)
    app.wsgi_app = wsgi


class RequestIds:
    """WSGI middleware: every request gets an ID for its log lines and its emails' envelopes, and
    answers with it in X-Request-ID. Behind a trusted proxy, an ID the proxy sent is kept."""

    def __init__(self, app, *, trust_header: bool):
        self.app = app
        self.trust_header = trust_header

    def __call__(self, environ, start_response):
        given = safe_id(environ.get("HTTP_X_REQUEST_ID")) if self.trust_header else None
        request_id = given or new_request_id()
        request_id_var.set(request_id)
        outbox_id_var.set(None)

        def start_with_id(status, headers, exc_info=None):
            headers.append((REQUEST_ID_HEADER, request_id))
            return start_response(status, headers, exc_info)

        # Cleared once the response is sent, so lines logged between requests claim none.
        return ClosingIterator(self.app(environ, start_with_id), _forget_request)


def _forget_request() -> None:
    request_id_var.set(None)
    outbox_id_var.set(None)


@bp.get("/metrics")
@public
def metrics():
    """Prometheus text format. METRICS_TOKEN set: only with `Authorization: Bearer <token>`.
    Unset: open in development, and absent (404) anywhere else."""
    ctx = portal_context()
    token = ctx.settings.metrics_token
    if token is None:
        if ctx.settings.portal_env != "development":
            abort(404)
    elif not hmac.compare_digest(request.headers.get("Authorization", "").encode(), f"Bearer {token}".encode()):
        return Response("unauthorized\n", 401, {"WWW-Authenticate": 'Bearer realm="metrics"'}, mimetype="text/plain")
    outbox = CollectorRegistry(auto_describe=False)
    outbox.register(
        OutboxCollector(
            ctx.db,
            [family.name for family in ctx.families],
            zone=report_timezone(ctx.settings),
            no_receipt_hours=ctx.settings.outbox_no_receipt_hours,
        )
    )
    if ctx.settings.metrics_dir:
        # Every process on this machine that wrote metrics (gunicorn workers, RQ workers), added up.
        from prometheus_client.multiprocess import MultiProcessCollector

        counted = CollectorRegistry()
        MultiProcessCollector(counted)
    else:
        counted = REGISTRY  # this process only (a development server)
    body = generate_latest(counted) + generate_latest(outbox)
    return Response(body, 200, {"Cache-Control": "no-store"}, content_type=CONTENT_TYPE_LATEST)


@bp.get("/readyz")
@public
def readyz():
    """200 when this instance can work: the database and Redis answer and a worker beat recently;
    503 naming what failed. The figures (round trips, heartbeat age) are in the body either way."""
    ctx = portal_context()
    checks = {"database": _timed(ctx.db.ping), "redis": _timed(ctx.redis.ping)}
    if checks["redis"]["ok"]:
        try:
            beats = newest_heartbeat(ctx.redis)
            checks["worker_heartbeat"] = {
                "ok": beats.fresh,
                "newest_age_seconds": None if beats.newest_age_seconds is None else round(beats.newest_age_seconds, 1),
                "live_workers": beats.live_workers,
                "stale_after_seconds": STALE_AFTER_SECONDS,
            }
        except Exception as error:
            checks["worker_heartbeat"] = {"ok": False, "error": type(error).__name__}
    else:
        checks["worker_heartbeat"] = {"ok": False, "error": "redis unavailable"}
    failing = [name for name, check in checks.items() if not check["ok"]]
    body = {"status": "unavailable" if failing else "ok", "checks": checks}
    if checks["redis"]["ok"]:
        body["sending"] = _sending(ctx.redis)
    if failing:
        body["failing"] = failing
    return jsonify(body), 503 if failing else 200


def _sending(redis) -> dict:
    """Whether an operator paused sending: a deliberate state, so the instance stays ready. Who
    paused is a user ID (None: the command line), never an address: this page is public."""
    try:
        held = pauses(redis)
    except Exception as error:
        return {"error": type(error).__name__}
    return {
        "paused": bool(held),
        "pauses": [
            {
                "scope": "all" if pause.scope == ALL_SENDING else pause.scope,
                "by_user_id": pause.actor_user_id,
                "reason": pause.reason,
                "since": pause.at,
            }
            for pause in held
        ],
    }


def _timed(ping) -> dict:
    started = time.perf_counter()
    try:
        ping()
    except Exception as error:  # the class only: connection errors can carry a URL with a password
        return {"ok": False, "error": type(error).__name__}
    return {"ok": True, "ms": round((time.perf_counter() - started) * 1000, 1)}
