"""The provider model's answers: Resend's error shapes, its authorization check and its checks on
the body of POST /emails."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

_MAX_RECIPIENTS = 50
_TAG_PART = re.compile(r"^[A-Za-z0-9_-]{1,256}$")
# "a@b" or "Name <a@b>"; the domain needs no dot, so the dev sender portal@localhost passes.
_ADDRESS = re.compile(r"^(?:[^<>]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$")
_ADDRESS_FORMAT = "The email address needs to follow the `email@example.com` or `Name <email@example.com>` format."


@dataclasses.dataclass(frozen=True)
class Answer:
    """What the provider answers; `drop` means the connection closes with no answer at all."""

    status: int
    body: Any
    headers: dict = dataclasses.field(default_factory=dict)
    drop: bool = False


def error(status: int, name: str, message: str, headers: dict | None = None) -> Answer:
    return Answer(status, {"statusCode": status, "name": name, "message": message}, headers or {})


def check_auth(authorization: str | None) -> Answer | None:
    scheme, _, token = (authorization or "").strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return error(401, "missing_api_key", "Missing API key in the authorization header.")
    if token == "None":
        # What the SDK sends when resend.api_key was never set; Resend rejects it too.
        return error(403, "invalid_api_key", "API key is invalid (resend.api_key is not set).")
    return None


def rate_limited(retry_after: float, limit_headers: dict | None = None) -> Answer:
    seconds = str(int(float(retry_after))) if float(retry_after).is_integer() else str(retry_after)
    headers = {"ratelimit-limit": "2", "ratelimit-reset": seconds, **(limit_headers or {})}
    return error(
        429,
        "rate_limit_exceeded",
        "Too many requests. Please retry after the given delay.",
        {**headers, "retry-after": seconds, "ratelimit-remaining": "0"},
    )


def validate(payload: Any) -> Answer | None:
    """Resend's checks on POST /emails, in the order a caller would meet them."""
    if not isinstance(payload, dict):
        return error(422, "validation_error", "The request body must be a JSON object.")
    for name in ("from", "to", "subject"):
        if payload.get(name) in (None, "", []):
            return error(422, "missing_required_field", f"Missing `{name}` field.")
    if not isinstance(payload["from"], str) or not _ADDRESS.match(payload["from"].strip()):
        return error(422, "validation_error", f"Invalid `from` field. {_ADDRESS_FORMAT}")
    for name in ("to", "cc", "bcc", "reply_to"):
        problem = _check_addresses(name, payload.get(name))
        if problem is not None:
            return problem
    if not isinstance(payload["subject"], str):
        return error(422, "validation_error", "The `subject` field must be a string.")
    for name in ("html", "text"):
        if payload.get(name) is not None and not isinstance(payload[name], str):
            return error(422, "validation_error", f"The `{name}` field must be a string.")
    if not payload.get("html") and not payload.get("text"):
        return error(422, "validation_error", "Missing `html` or `text` field.")
    return _check_tags(payload.get("tags")) or _check_extras(payload)


def _check_addresses(name: str, value: Any) -> Answer | None:
    if value is None:
        return None
    addresses = [value] if isinstance(value, str) else value
    if not isinstance(addresses, list) or not all(isinstance(a, str) for a in addresses):
        return error(422, "validation_error", f"The `{name}` field must be a string or a list of strings.")
    if len(addresses) > _MAX_RECIPIENTS:
        return error(422, "validation_error", f"Too many recipients in `{name}`: at most {_MAX_RECIPIENTS}.")
    if not all(_ADDRESS.match(a.strip()) for a in addresses):
        return error(422, "validation_error", f"Invalid `{name}` field. {_ADDRESS_FORMAT}")
    return None


def _check_tags(tags: Any) -> Answer | None:
    if tags is None:
        return None
    if not isinstance(tags, list):
        return error(422, "validation_error", "The `tags` field must be a list of {name, value} objects.")
    for tag in tags:
        if not isinstance(tag, dict) or not all(isinstance(tag.get(k), str) for k in ("name", "value")):
            return error(422, "validation_error", "Each tag needs a string `name` and `value`.")
        if not (_TAG_PART.match(tag["name"]) and _TAG_PART.match(tag["value"])):
            return error(
                422,
                "validation_error",
                "Tags should only contain ASCII letters, numbers, underscores, or dashes (1-256 characters).",
            )
    return None


def _check_extras(payload: dict) -> Answer | None:
    headers = payload.get("headers")
    if headers is not None and (not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values())):
        return error(422, "validation_error", "The `headers` field must be an object of strings.")
    attachments = payload.get("attachments")
    if attachments is not None and (
        not isinstance(attachments, list) or not all(isinstance(a, dict) for a in attachments)
    ):
        return error(422, "validation_error", "The `attachments` field must be a list of objects.")
    return None
