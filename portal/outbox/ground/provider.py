"""The one module that talks to the email provider, through the `resend` SDK.

It adds the portal's tags, cleans every tag to Resend's allowed characters, sends with the row's
idempotency key and a timeout, and classifies every answer into what the engine must do next.
"""

from __future__ import annotations

import dataclasses
import json as jsonlib
import re
import threading
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import resend
import urllib3
from resend.exceptions import ResendError
from resend.http_client import HTTPClient

from portal.core.settings import Settings
from portal.outbox.ground.rendering import RenderedEmail

LOCAL_MODEL_API_KEY = "re_local_provider_model"
DEFAULT_API_URL = "https://api.resend.com"
BATCH_LIMIT = 100  # Resend's: emails in one POST /emails/batch
_TAG_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")

ACCEPTED = "accepted"
RETRY = "retry"
UNKNOWN_OUTCOME = "unknown_outcome"
REJECTED = "rejected"


@dataclass(frozen=True)
class ProviderAnswer:
    kind: str
    message_id: str | None = None
    reason: str | None = None
    retry_after: float | None = None
    # True when the request may have reached the provider and been accepted without our knowing.
    ambiguous: bool = False
    # The HTTP status and headers of the answer (None when none came), for the rate limit.
    status: int | None = None
    headers: dict | None = None


@dataclass(frozen=True)
class BatchItem:
    """One email of a batch: its frozen message, its recipient, and the row it is for."""

    message: RenderedEmail
    to: str
    family: str
    outbox_id: str


@dataclass(frozen=True)
class BatchAnswer:
    """The provider's answer to a whole batch, classified as a single email's is; when accepted,
    one message ID per item, in the request's order."""

    kind: str
    message_ids: tuple[str, ...] = ()
    reason: str | None = None
    retry_after: float | None = None
    ambiguous: bool = False
    status: int | None = None
    headers: dict | None = None

    @classmethod
    def of(cls, answer: ProviderAnswer) -> BatchAnswer:
        return cls(answer.kind, reason=answer.reason, retry_after=answer.retry_after, ambiguous=answer.ambiguous)


def clean_tag(text: str) -> str:
    return _TAG_UNSAFE.sub("_", str(text))[:256] or "_"


def build_tags(message: RenderedEmail, *, environment: str, family: str, outbox_id: str) -> list[dict]:
    tags = dict(message.tags)
    tags.update({"environment": environment, "family": family, "outbox_id": outbox_id})
    return [{"name": clean_tag(name), "value": clean_tag(value)} for name, value in tags.items()]


class PooledHTTPClient(HTTPClient):
    """The SDK's HTTP client interface on one urllib3 connection pool.

    One connection (and TLS handshake) per worker process instead of one per email, and none of
    requests' per-call session work (cookie merging, environment and ~/.netrc lookups), which cost
    more CPU than the rest of a send. Proxy settings are read from the environment once.
    """

    def __init__(self, timeout: float, api_url: str):
        proxy = urllib.request.getproxies().get(urlsplit(api_url).scheme)
        if proxy and not urllib.request.proxy_bypass(urlsplit(api_url).hostname or ""):
            self._pool = urllib3.ProxyManager(proxy)
        else:
            self._pool = urllib3.PoolManager()
        self._timeout = urllib3.Timeout(total=timeout)
        self._last = threading.local()

    def last_answer(self) -> tuple[int | None, dict | None]:
        """This thread's last HTTP status and headers (the SDK does not hand them back on success)."""
        return getattr(self._last, "status", None), getattr(self._last, "headers", None)

    def request(self, method, url, headers, json=None, files=None, data=None):
        if files is not None or data is not None:
            raise RuntimeError("the portal sends JSON only")
        self._last.status, self._last.headers = None, None
        body = None if json is None else jsonlib.dumps(json, allow_nan=False).encode()
        headers = {**headers, "Content-Type": "application/json"} if body is not None else dict(headers)
        try:
            response = self._pool.request(
                method.upper(), url, body=body, headers=headers, timeout=self._timeout, retries=False, redirect=False
            )
        except urllib3.exceptions.HTTPError as error:
            # The SDK turns this into ResendError(error_type="HttpClientError"): the request may have landed.
            raise RuntimeError(f"Request failed: {type(error).__name__}") from error
        self._last.status, self._last.headers = response.status, dict(response.headers)
        return response.data, response.status, response.headers


class ResendProvider:
    def __init__(self, settings: Settings):
        self.api_key = settings.resend_api_key or LOCAL_MODEL_API_KEY
        self.api_url = (settings.resend_api_url or DEFAULT_API_URL).rstrip("/")
        self.http_client = PooledHTTPClient(timeout=settings.provider_timeout_seconds, api_url=self.api_url)
        self.environment = settings.portal_env

    def build_params(self, message: RenderedEmail, *, to: str, family: str, outbox_id: str) -> dict:
        params = {
            "from": message.from_address,
            "to": [to],
            "subject": message.subject,
            "html": message.html,
            "text": message.text,
            "tags": build_tags(message, environment=self.environment, family=family, outbox_id=outbox_id),
        }
        if message.reply_to:
            params["reply_to"] = message.reply_to
        if message.headers:
            params["headers"] = dict(message.headers)
        if message.attachments:
            attachment = message.attachments[0]
            params["attachments"] = [
                {
                    "filename": attachment.filename,
                    "content": attachment.content_b64,
                    "content_type": attachment.content_type,
                }
            ]
        return params

    def send(
        self, message: RenderedEmail, *, to: str, idempotency_key: str, family: str, outbox_id: str
    ) -> ProviderAnswer:
        self._configure()
        params = self.build_params(message, to=to, family=family, outbox_id=outbox_id)
        try:
            response = resend.Emails.send(params, {"idempotency_key": idempotency_key})
        except ResendError as error:
            answer = classify_error(error)
        else:
            message_id = response.get("id") if isinstance(response, dict) else None
            if message_id:
                answer = ProviderAnswer(ACCEPTED, message_id=message_id)
            else:
                answer = ProviderAnswer(RETRY, reason="provider_answer_without_id", ambiguous=True)
        status, headers = self.http_client.last_answer()
        return dataclasses.replace(answer, status=status, headers=headers)

    def send_batch(self, items: Sequence[BatchItem], *, idempotency_key: str) -> BatchAnswer:
        """Send up to 100 emails in one request (Resend's POST /emails/batch) under one key.

        Strict validation, deliberately: the provider then answers for the whole list, all or
        nothing, so one request is one decision for every row in it. A 4xx proves that nothing of
        the list was sent (the rows can go on alone), and an accepted answer holds one ID per item,
        by position. Permissive validation would send part of a list and refuse the rest, and a
        retry of the same list under the same key would have to reproduce that split exactly.

        The list is built from the frozen payloads in the caller's order, each item as `send`
        builds it, so the same items always make the same request body.
        """
        if not 1 <= len(items) <= BATCH_LIMIT:
            raise ValueError(f"a batch holds 1 to {BATCH_LIMIT} emails, not {len(items)}")
        if any(item.message.attachments for item in items):
            raise ValueError("the provider refuses attachments in a batch")
        self._configure()
        params = [
            self.build_params(item.message, to=item.to, family=item.family, outbox_id=item.outbox_id) for item in items
        ]
        try:
            response = resend.Batch.send(params, {"idempotency_key": idempotency_key, "batch_validation": "strict"})
        except ResendError as error:
            answer = BatchAnswer.of(classify_error(error))
        else:
            data = response.get("data") if isinstance(response, dict) else None
            ids = tuple(entry.get("id") for entry in data or () if isinstance(entry, dict))
            if len(ids) == len(items) and all(ids):
                answer = BatchAnswer(ACCEPTED, message_ids=ids)
            else:
                answer = BatchAnswer(RETRY, reason="provider_answer_ids_mismatch", ambiguous=True)
        status, headers = self.http_client.last_answer()
        return dataclasses.replace(answer, status=status, headers=headers)

    def _configure(self) -> None:
        # The SDK keeps its configuration in module globals; set ours on every call.
        resend.api_key, resend.api_url, resend.default_http_client = self.api_key, self.api_url, self.http_client

    # Reads for "ask the provider" (portal/outbox/hear/lookup.py); both raise ResendError on failure.
    def retrieve_email(self, message_id: str) -> dict:
        """Resend's "retrieve a sent email" (GET /emails/{id})."""
        self._configure()
        return dict(resend.Emails.get(message_id))

    def list_emails(self, *, limit: int = 100, after: str | None = None) -> dict:
        """Resend's "list sent emails" (GET /emails), newest first; `after` is the last ID of the page before."""
        self._configure()
        params = {"limit": limit, **({"after": after} if after else {})}
        return dict(resend.Emails.list(params))

    # Resend's team-wide suppression list (portal/outbox/hear/suppression_comparison.py); each raises
    # ResendError on failure.
    def list_suppressions(self, *, limit: int = 100, after: str | None = None) -> dict:
        """Resend's "list suppressions" (GET /suppressions), oldest first; `after` is the last ID of the page before."""
        self._configure()
        params = {"limit": limit, **({"after": after} if after else {})}
        return dict(resend.Suppressions.list(params))

    def add_suppression(self, email: str) -> dict:
        """POST /suppressions: the entry's ID (an address already listed answers with its entry)."""
        self._configure()
        return dict(resend.Suppressions.add({"email": email}))

    def remove_suppression(self, suppression_id: str) -> dict:
        """DELETE /suppressions/{id}: by the entry's ID, so an erased person's address is never sent."""
        self._configure()
        return dict(resend.Suppressions.remove(suppression_id))


def classify_error(error: ResendError) -> ProviderAnswer:
    error_type = str(getattr(error, "error_type", "") or "")
    try:
        code = int(error.code)
    except (TypeError, ValueError):
        code = 0
    # The SDK reports a transport failure as code 500 with this type: the request may have landed.
    if error_type == "HttpClientError":
        return ProviderAnswer(RETRY, reason="transport_failure", ambiguous=True)
    if code == 409 and error_type == "invalid_idempotent_request":
        return ProviderAnswer(UNKNOWN_OUTCOME, reason="invalid_idempotent_request")
    if code == 409 and error_type == "concurrent_idempotent_requests":
        return ProviderAnswer(RETRY, reason="concurrent_idempotent_requests", ambiguous=True)
    if code == 429:
        return ProviderAnswer(RETRY, reason=f"rate_limited: {error_type}", retry_after=_retry_after(error))
    if code >= 500:
        return ProviderAnswer(RETRY, reason=f"provider_error: {code} {error_type}", ambiguous=True)
    return ProviderAnswer(REJECTED, reason=f"provider_rejected: {code} {error_type}")


def _retry_after(error: ResendError) -> float | None:
    headers = {k.lower(): v for k, v in (getattr(error, "headers", None) or {}).items()}
    try:
        return float(headers["retry-after"])
    except (KeyError, ValueError):
        return None
