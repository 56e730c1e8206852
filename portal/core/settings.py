"""The portal's one settings object, read from the environment when an app or worker starts.

Every variable of the contract lives here. A bad value stops start-up with one line that names
the variable (ConfigError is a SystemExit, so an uncaught one prints just that line).
"""

from __future__ import annotations

import base64
import binascii
import os
import secrets
from dataclasses import dataclass, field, fields, replace
from email.utils import parseaddr
from pathlib import Path
from urllib.parse import urlparse
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

# Relative to the directory the portal is started from, as the contract's DATABASE_URL default is.
DEFAULT_INSTANCE = Path("instance")
DEV_WEBHOOK_SECRET = "whsec_ZGV2LXdlYmhvb2stc2VjcmV0LW5vdC1mb3ItcHJvZHVjdGlvbg=="
DEV_ATTENDANCE_WEBHOOK_SECRET = "whsec_ZGV2LWF0dGVuZGFuY2Utc2VjcmV0LW5vdC1mb3ItcHJvZHVjdGlvbg=="
ENVIRONMENTS = ("development", "staging", "production")


class ConfigError(SystemExit):
    """Bad configuration: the message names the variable and what is wrong with it."""

    def __init__(self, variable: str, problem: str):
        super().__init__(f"configuration error: {variable} {problem}")
        self.variable = variable


@dataclass(frozen=True)
class Settings:
    database_url: str
    redis_url: str
    secret_key: str
    # On a server: the longest an erased person stays in its history (purge interval, restore window).
    database_history_days: int | None = None
    portal_env: str = "development"
    public_base_url: str = "http://127.0.0.1:5000"
    email_from: str = "Partner Portal <portal@localhost>"
    # The broadcast stream's sender (campaigns): its own address, so a complaint about a newsletter
    # weighs on that address's reputation, not on the one invitations and resets go out from.
    campaign_from: str = "Partner Portal <portal@localhost>"
    sales_inbox: str = "sales@teei.example"
    # Where TEEI hears of each new partner application (issue 26).
    applications_inbox: str = "partners@teei.example"
    resend_api_key: str | None = None
    resend_api_url: str | None = None
    resend_webhook_secret: str = DEV_WEBHOOK_SECRET
    outbox_claim_seconds: int = 300
    outbox_max_attempts: int = 8
    outbox_retry_base_seconds: int = 30
    outbox_retry_cap_seconds: int = 3600
    relay_interval_seconds: int = 60
    outbox_republish_after_seconds: int = 300
    provider_idempotency_window_seconds: int = 86400
    provider_timeout_seconds: float = 15.0
    # --- the delivery engine's second pass (issue 9) ---
    resend_rate_limit_per_second: int = 5
    provider_window_margin_seconds: int = 600
    # Emails of a batchable family (a campaign, a bulk invitation) per provider request; 1 sends each alone.
    outbox_batch_size: int = 100
    receipt_retention_days: int = 30
    # An accepted email with no delivery receipt this long after is counted for a person to look at,
    # and the lookups ask the provider about it: at most PROVIDER_LOG_RETENTION_DAYS in hours less
    # NO_RECEIPT_MARGIN_HOURS (see _no_receipt_hours).
    outbox_no_receipt_hours: int = 12
    # How long the provider keeps an email's record (GET /emails/{id}): 1 day on Resend's free plan.
    provider_log_retention_days: int = 1
    # The provider is asked about those at most this many times an hour (receipt_lookup.py).
    outbox_lookups_per_hour: int = 60
    outbox_retention_days: int = 365
    # People who never became users: how long what they sent is kept (portal/privacy/retention.py).
    demo_request_retention_days: int = 365
    declined_application_retention_days: int = 365
    open_invitation_retention_days: int = 180
    attendance_webhook_secret: str = DEV_ATTENDANCE_WEBHOOK_SECRET
    portal_timezone: str = "Europe/Oslo"
    report_schedule_interval_seconds: int = 300
    campaign_pass_interval_seconds: int = 5
    # --- operations: metrics, logs, proxies (issue 13) ---
    metrics_token: str | None = None
    log_format: str = "text"
    trusted_proxy_count: int = 0
    metrics_dir: str | None = None  # PROMETHEUS_MULTIPROC_DIR, prometheus_client's own variable
    instance_path: Path = field(default=DEFAULT_INSTANCE)

    @property
    def outbox_job_timeout_seconds(self) -> int:
        """RQ's time limit for one delivery job: never longer than the claim that admits it."""
        return self.outbox_claim_seconds

    @property
    def is_deployed(self) -> bool:
        """Staging and production: served over HTTPS to real people, with real secrets."""
        return self.portal_env != "development"

    def with_overrides(self, **changes) -> Settings:
        return replace(self, **changes)

    @classmethod
    def from_env(cls, environ=None, instance_path: Path | None = None) -> Settings:
        env = dict(os.environ if environ is None else environ)
        instance = Path(instance_path or env.get("PORTAL_INSTANCE_PATH") or DEFAULT_INSTANCE).absolute()

        portal_env = env.get("PORTAL_ENV", "development")
        if portal_env not in ENVIRONMENTS:
            raise ConfigError("PORTAL_ENV", f"must be one of {', '.join(ENVIRONMENTS)}")
        # Staging and production name what they use: a default here would be a fresh local database,
        # links to 127.0.0.1 in every email, a sender no provider accepts, or secrets anyone can read
        # in this repository (CONTRACT.md: never a silent fallback). Only development has defaults.
        deployed = portal_env != "development"
        if deployed:
            for name in ("DATABASE_URL", "PUBLIC_BASE_URL", "EMAIL_FROM", "CAMPAIGN_FROM"):
                if not env.get(name):
                    raise ConfigError(name, f"is required when PORTAL_ENV={portal_env}")

        database_url, redis_url, secret_key = _stores(env, instance, portal_env)
        history_days = _positive_int(env, "DATABASE_HISTORY_DAYS", 0) if env.get("DATABASE_HISTORY_DAYS") else None
        base_url, email_from, api_key, api_url, webhook_secret, attendance_secret = _email_and_webhooks(env, portal_env)
        timezone_name = env.get("PORTAL_TIMEZONE") or "Europe/Oslo"
        try:
            ZoneInfo(timezone_name)
        except (ZoneInfoNotFoundError, ValueError):
            raise ConfigError("PORTAL_TIMEZONE", "must be a time zone name such as Europe/Oslo") from None
        claim_seconds, provider_timeout, window, window_margin = _delivery_timing(env)
        log_format, metrics_token, proxy_count, metrics_dir = _operations(env)

        return cls(
            database_url=database_url,
            database_history_days=history_days,
            redis_url=redis_url,
            secret_key=secret_key,
            portal_env=portal_env,
            public_base_url=base_url,
            email_from=email_from,
            campaign_from=_sender(env, "CAMPAIGN_FROM", email_from),
            sales_inbox=env.get("SALES_INBOX", "sales@teei.example"),
            applications_inbox=_inbox(env, "APPLICATIONS_INBOX", "partners@teei.example"),
            resend_api_key=api_key,
            resend_api_url=api_url,
            resend_webhook_secret=webhook_secret,
            outbox_claim_seconds=claim_seconds,
            outbox_max_attempts=_positive_int(env, "OUTBOX_MAX_ATTEMPTS", 8),
            outbox_retry_base_seconds=_positive_int(env, "OUTBOX_RETRY_BASE_SECONDS", 30),
            outbox_retry_cap_seconds=_positive_int(env, "OUTBOX_RETRY_CAP_SECONDS", 3600),
            relay_interval_seconds=_positive_int(env, "RELAY_INTERVAL_SECONDS", 60),
            outbox_republish_after_seconds=_positive_int(env, "OUTBOX_REPUBLISH_AFTER_SECONDS", 300),
            provider_idempotency_window_seconds=window,
            provider_timeout_seconds=provider_timeout,
            resend_rate_limit_per_second=_positive_int(env, "RESEND_RATE_LIMIT_PER_SECOND", 5),
            provider_window_margin_seconds=window_margin,
            outbox_batch_size=_batch_size(env),
            receipt_retention_days=_positive_int(env, "RECEIPT_RETENTION_DAYS", 30),
            outbox_no_receipt_hours=_no_receipt_hours(env),
            provider_log_retention_days=_positive_int(env, "PROVIDER_LOG_RETENTION_DAYS", 1),
            outbox_lookups_per_hour=_positive_int(env, "OUTBOX_LOOKUPS_PER_HOUR", 60),
            outbox_retention_days=_positive_int(env, "OUTBOX_RETENTION_DAYS", 365),
            demo_request_retention_days=_positive_int(env, "DEMO_REQUEST_RETENTION_DAYS", 365),
            declined_application_retention_days=_positive_int(env, "DECLINED_APPLICATION_RETENTION_DAYS", 365),
            open_invitation_retention_days=_positive_int(env, "OPEN_INVITATION_RETENTION_DAYS", 180),
            attendance_webhook_secret=attendance_secret,
            portal_timezone=timezone_name,
            report_schedule_interval_seconds=_positive_int(env, "REPORT_SCHEDULE_INTERVAL_SECONDS", 300),
            campaign_pass_interval_seconds=_positive_int(env, "CAMPAIGN_PASS_INTERVAL_SECONDS", 5),
            metrics_token=metrics_token,
            log_format=log_format,
            trusted_proxy_count=proxy_count,
            metrics_dir=metrics_dir,
            instance_path=instance,
        )

    def as_public_dict(self) -> dict:
        """Settings without secrets, for `flask config`-style diagnostics."""
        hidden = {"secret_key", "resend_api_key", "resend_webhook_secret", "attendance_webhook_secret", "metrics_token"}
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in hidden}


LOG_FORMATS = ("text", "json")


def _inbox(env: dict, name: str, default: str) -> str:
    """An address the portal writes to; a value without "@" would only fail later, in the worker."""
    value = env.get(name) or default
    if "@" not in parseaddr(value)[1]:
        raise ConfigError(name, "must be an email address, such as partners@teei.example")
    return value


MAX_TRUSTED_PROXIES = 5


def _stores(env: dict, instance: Path, portal_env: str) -> tuple[str, str, str]:
    """DATABASE_URL, REDIS_URL and SECRET_KEY."""
    database_url = env.get("DATABASE_URL") or f"sqlite+libsql:///{instance / 'portal.db'}"
    if not database_url.startswith("sqlite+libsql://"):
        raise ConfigError("DATABASE_URL", "must start with sqlite+libsql://")

    redis_url = env.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    if urlparse(redis_url).scheme not in ("redis", "rediss", "unix"):
        raise ConfigError("REDIS_URL", "must be a redis:// or rediss:// URL")

    secret_key = env.get("SECRET_KEY")
    if not secret_key:
        if portal_env != "development":
            raise ConfigError("SECRET_KEY", f"is required when PORTAL_ENV={portal_env}")
        secret_key = _dev_secret_key(instance)

    return database_url, redis_url, secret_key


def _email_and_webhooks(env: dict, portal_env: str) -> tuple[str, str, str | None, str | None, str, str]:
    """PUBLIC_BASE_URL, EMAIL_FROM, RESEND_API_KEY, RESEND_API_URL and the two webhook secrets."""
    deployed = portal_env != "development"
    webhook_secret = env.get("RESEND_WEBHOOK_SECRET", DEV_WEBHOOK_SECRET)
    _check_webhook_secret("RESEND_WEBHOOK_SECRET", webhook_secret)
    if deployed and webhook_secret == DEV_WEBHOOK_SECRET:
        raise ConfigError("RESEND_WEBHOOK_SECRET", f"must not be the development secret when PORTAL_ENV={portal_env}")

    base_url = env.get("PUBLIC_BASE_URL", "http://127.0.0.1:5000").rstrip("/")
    if not _is_absolute_http(base_url):
        raise ConfigError("PUBLIC_BASE_URL", "must be an absolute http(s) URL")

    api_url = env.get("RESEND_API_URL") or None
    if api_url and not _is_absolute_http(api_url):
        raise ConfigError("RESEND_API_URL", "must be an absolute http(s) URL")
    email_from = _sender(env, "EMAIL_FROM", "Partner Portal <portal@localhost>")

    api_key = env.get("RESEND_API_KEY") or None
    if deployed and not api_key:
        raise ConfigError("RESEND_API_KEY", f"is required when PORTAL_ENV={portal_env}")

    attendance_secret = env.get("ATTENDANCE_WEBHOOK_SECRET") or DEV_ATTENDANCE_WEBHOOK_SECRET
    _check_webhook_secret("ATTENDANCE_WEBHOOK_SECRET", attendance_secret)
    if deployed and attendance_secret == DEV_ATTENDANCE_WEBHOOK_SECRET:
        raise ConfigError(
            "ATTENDANCE_WEBHOOK_SECRET", f"must not be the development secret when PORTAL_ENV={portal_env}"
        )

    return base_url, email_from, api_key, api_url, webhook_secret, attendance_secret


def _sender(env: dict, name: str, default: str) -> str:
    """A sender variable (EMAIL_FROM, CAMPAIGN_FROM): an address, with or without a display name."""
    value = env.get(name, default)
    if "@" not in parseaddr(value)[1]:
        raise ConfigError(name, "must be an address, such as Partner Portal <portal@example.org>")
    return value


def _delivery_timing(env: dict) -> tuple[int, float, int, int]:
    """OUTBOX_CLAIM_SECONDS, PROVIDER_TIMEOUT_SECONDS and the provider's idempotency window with its margin."""
    claim_seconds = _positive_int(env, "OUTBOX_CLAIM_SECONDS", 300)
    provider_timeout = _positive_float(env, "PROVIDER_TIMEOUT_SECONDS", 15.0)
    # A claim must outlive everything one delivery may take, or a second delivery could start
    # while the first is still sending. RQ's time limit for the job is the claim itself
    # (outbox_job_timeout_seconds) and a rate-limit wait ends before it, so the provider timeout
    # is the one figure to check.
    if claim_seconds <= provider_timeout:
        raise ConfigError("OUTBOX_CLAIM_SECONDS", f"must exceed PROVIDER_TIMEOUT_SECONDS ({provider_timeout:g} s)")
    window = _positive_int(env, "PROVIDER_IDEMPOTENCY_WINDOW_SECONDS", 86400)
    window_margin = _positive_int(env, "PROVIDER_WINDOW_MARGIN_SECONDS", 600)
    if window_margin >= window:
        raise ConfigError("PROVIDER_WINDOW_MARGIN_SECONDS", "must be shorter than the provider's window")

    return claim_seconds, provider_timeout, window, window_margin


def _operations(env: dict) -> tuple[str, str | None, int, str | None]:
    """LOG_FORMAT, METRICS_TOKEN, TRUSTED_PROXY_COUNT and PROMETHEUS_MULTIPROC_DIR (issue 13)."""
    log_format = env.get("LOG_FORMAT") or "text"
    if log_format not in LOG_FORMATS:
        raise ConfigError("LOG_FORMAT", f"must be one of {', '.join(LOG_FORMATS)}")
    metrics_token = env.get("METRICS_TOKEN") or None
    if metrics_token is not None and (
        len(metrics_token) < 16 or not metrics_token.isprintable() or " " in metrics_token
    ):
        raise ConfigError("METRICS_TOKEN", "must be at least 16 printable characters without spaces")
    raw = env.get("TRUSTED_PROXY_COUNT") or "0"
    try:
        proxies = int(raw)
    except ValueError:
        raise ConfigError("TRUSTED_PROXY_COUNT", f"must be a whole number, got {raw!r}") from None
    # Each trusted proxy lets the client's address be read one X-Forwarded-For entry further back;
    # a number larger than the real chain lets a client choose its own address (and rate-limit key).
    if not 0 <= proxies <= MAX_TRUSTED_PROXIES:
        raise ConfigError("TRUSTED_PROXY_COUNT", f"must be between 0 and {MAX_TRUSTED_PROXIES}")
    # prometheus_client reads it itself when first imported (so it is never set from here); a
    # relative path would point somewhere else for each process started from another directory.
    metrics_dir = env.get("PROMETHEUS_MULTIPROC_DIR") or None
    if metrics_dir is not None and not os.path.isabs(metrics_dir):
        raise ConfigError("PROMETHEUS_MULTIPROC_DIR", "must be an absolute path")
    return log_format, metrics_token, proxies, metrics_dir


def _is_absolute_http(url: str) -> bool:
    parts = urlparse(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def _check_webhook_secret(name: str, secret: str) -> None:
    """A Standard Webhooks secret: whsec_ and base64 key bytes. The message never repeats the value."""
    if not secret.startswith("whsec_"):
        raise ConfigError(name, "must start with whsec_")
    try:
        key = base64.b64decode(secret[len("whsec_") :] + "==", validate=False)
    except (binascii.Error, ValueError):
        key = b""
    if not key:
        raise ConfigError(name, "must carry a base64 key after whsec_")


# Time left between the lookups' first question about an email without a receipt and the provider
# forgetting it: two of receipt_lookup.py's ASK_AGAIN_HOURS (6), so an email whose first question
# went unanswered (a 429, an unreachable provider, an hour's budget spent on older emails) is asked
# a second time while the provider still knows it.
NO_RECEIPT_MARGIN_HOURS = 12


def _no_receipt_hours(env: dict) -> int:
    """OUTBOX_NO_RECEIPT_HOURS, refused when it asks about an email after the provider forgets it."""
    hours = _positive_int(env, "OUTBOX_NO_RECEIPT_HOURS", 12)
    retention_days = _positive_int(env, "PROVIDER_LOG_RETENTION_DAYS", 1)
    latest = retention_days * 24 - NO_RECEIPT_MARGIN_HOURS
    if hours > latest:
        raise ConfigError(
            "OUTBOX_NO_RECEIPT_HOURS",
            f"must be at most {latest} with PROVIDER_LOG_RETENTION_DAYS={retention_days}: the provider forgets "
            f"an email after {retention_days * 24} hours, and the lookups need {NO_RECEIPT_MARGIN_HOURS} of them",
        )
    return hours


def _batch_size(env: dict) -> int:
    size = _positive_int(env, "OUTBOX_BATCH_SIZE", 100)
    if size > 100:
        raise ConfigError("OUTBOX_BATCH_SIZE", "must be at most 100 (the provider's batch limit)")
    return size


def _positive_int(env: dict, name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(name, f"must be a whole number, got {raw!r}") from None
    if value <= 0:
        raise ConfigError(name, "must be greater than zero")
    return value


def _positive_float(env: dict, name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(name, f"must be a number, got {raw!r}") from None
    if not value > 0 or value == float("inf"):
        raise ConfigError(name, "must be greater than zero")
    return value


def _dev_secret_key(instance: Path) -> str:
    """Generate a development key once and keep it, so sessions survive restarts."""
    instance.mkdir(parents=True, exist_ok=True)
    key_file = instance / "secret_key"
    if not key_file.exists():
        key_file.write_text(secrets.token_hex(32))
        key_file.chmod(0o600)
    return key_file.read_text().strip()
