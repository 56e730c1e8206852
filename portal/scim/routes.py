"""SCIM 2.0 (RFC 7644) at /scim/v2: discovery, and the company's people as Users.

A bearer token per company is the only authority (`Authorization: Bearer scim_…`); it reaches that
company's managers and volunteers and nobody else. No session and no CSRF (a server calls, not a
browser); every error is RFC 7644's JSON error. Requests are limited per token (REQUESTS_PER_MINUTE).
"""

from __future__ import annotations

import json
import re

from flask import Blueprint, Response, abort, g, request
from limits import RateLimitItemPerMinute
from limits.storage import RedisStorage
from limits.strategies import FixedWindowRateLimiter
from pydantic import ValidationError
from scim2_models import (
    AuthenticationScheme,
    Bulk,
    ChangePassword,
    Context,
    ETag,
    Filter,
    Patch,
    PatchOp,
    ResourceType,
    Schema,
    SearchRequest,
    ServiceProviderConfig,
    Sort,
)
from scim2_models.exceptions import SCIMException

from portal.core import clock
from portal.scim import operations, queries
from portal.scim.operations import ScimRefused
from portal.scim.resources import (
    PortalEnterprise,
    PortalUser,
    PortalUserResource,
    SentUser,
    as_json,
    as_sent,
    fields_of,
    to_user,
)
from portal.web.access import public
from portal.web.extensions import portal_context

bp = Blueprint("scim", __name__)

MEDIA_TYPE = "application/scim+json"
MAX_RESULTS = 200
REQUESTS_PER_MINUTE = 600
_LIMIT = RateLimitItemPerMinute(REQUESTS_PER_MINUTE)
_FILTER = re.compile(r'^\s*userName\s+eq\s+"((?:[^"\\]|\\.)*)"\s*$', re.IGNORECASE)
_ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error"
LIST_RESPONSE = "urn:ietf:params:scim:api:messages:2.0:ListResponse"


def scim_json(body: dict, status: int = 200, **headers) -> Response:
    return Response(json.dumps(body), status=status, mimetype=MEDIA_TYPE, headers=headers)


def scim_error(status: int, detail: str, scim_type: str | None = None) -> Response:
    body = {"schemas": [_ERROR_SCHEMA], "status": str(status), "detail": detail}
    if scim_type:
        body["scimType"] = scim_type
    return scim_json(body, status)


def _limiter() -> FixedWindowRateLimiter:
    context = portal_context()
    storage = getattr(context, "_scim_limit_storage", None)
    if storage is None:
        storage = RedisStorage(
            context.settings.redis_url, connection_pool=context.redis.connection_pool, key_prefix="portal-limits"
        )
        context._scim_limit_storage = storage
    return FixedWindowRateLimiter(storage)


@bp.before_request
def authenticate():
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    company_id = queries.company_for_token(portal_context().db, token.strip()) if scheme.lower() == "bearer" else None
    if company_id is None:
        response = scim_error(401, "A valid bearer token for SCIM is required.")
        response.headers["WWW-Authenticate"] = 'Bearer realm="scim"'
        return response
    try:
        allowed = _limiter().hit(_LIMIT, "scim", queries.token_hash(token.strip()))
    except Exception:  # noqa: BLE001 - Redis down: provisioning goes on unlimited rather than stopping
        allowed = True
    if not allowed:
        response = scim_error(429, f"More than {_LIMIT.amount} requests a minute with this token.")
        response.headers["Retry-After"] = "60"
        return response
    g.company_id = company_id
    return None


def _base() -> str:
    return request.host_url.rstrip("/") + request.script_root


# --- discovery -------------------------------------------------------------------------------


def _service_provider_config() -> ServiceProviderConfig:
    return ServiceProviderConfig(
        patch=Patch(supported=True),
        bulk=Bulk(supported=False, max_operations=0, max_payload_size=0),
        filter=Filter(supported=True, max_results=MAX_RESULTS),
        change_password=ChangePassword(supported=False),
        sort=Sort(supported=False),
        etag=ETag(supported=False),
        authentication_schemes=[
            AuthenticationScheme(
                type="oauthbearertoken",
                name="Bearer token",
                description="A token per company, from `flask --app portal scim token --company NAME`",
                primary=True,
            )
        ],
    )


def _schemas() -> list[Schema]:
    user = PortalUserResource.to_schema()
    user.name, user.description = "User", "User Account"
    extension = PortalEnterprise.to_schema()
    extension.name, extension.description = "EnterpriseUser", "Enterprise User"
    return [user, extension]


def _resource_type() -> ResourceType:
    return ResourceType.from_resource(PortalUser)


def _dump(model, location: str) -> dict:
    body = model.model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE)
    body.setdefault("meta", {})["location"] = location
    body["meta"].setdefault("resourceType", type(model).__name__)
    return body


@bp.get("/ServiceProviderConfig")
@public  # the bearer token (authenticate) is the authority on every SCIM endpoint
def service_provider_config():
    return scim_json(_dump(_service_provider_config(), f"{_base()}/ServiceProviderConfig"))


@bp.get("/ResourceTypes")
@public
def resource_types():
    body = _dump(_resource_type(), f"{_base()}/ResourceTypes/User")
    return scim_json(_list([body], total=1, start_index=1))


@bp.get("/ResourceTypes/<name>")
@public
def resource_type(name: str):
    if name != "User":
        return scim_error(404, "No such resource type.")
    return scim_json(_dump(_resource_type(), f"{_base()}/ResourceTypes/User"))


@bp.get("/Schemas")
@public
def schemas():
    bodies = [_dump(schema, f"{_base()}/Schemas/{schema.id}") for schema in _schemas()]
    return scim_json(_list(bodies, total=len(bodies), start_index=1))


@bp.get("/Schemas/<path:schema_id>")
@public
def schema(schema_id: str):
    for found in _schemas():
        if found.id == schema_id:
            return scim_json(_dump(found, f"{_base()}/Schemas/{found.id}"))
    return scim_error(404, "No such schema.")


def _list(resources: list[dict], *, total: int, start_index: int) -> dict:
    return {
        "schemas": [LIST_RESPONSE],
        "totalResults": total,
        "startIndex": start_index,
        "itemsPerPage": len(resources),
        "Resources": resources,
    }


# --- Users -----------------------------------------------------------------------------------


def _user_json(person: queries.Person, attributes: list[str] | None = None, excluded: list[str] | None = None) -> dict:
    return as_json(to_user(person, f"{_base()}/Users/{person.id}"), attributes, excluded)


def _attribute_list(name: str) -> list[str] | None:
    raw = request.args.get(name)
    return [part.strip() for part in raw.split(",") if part.strip()] if raw else None


def _positive(raw, name: str, default: int, *, least: int) -> int:
    if raw is None:
        return default
    try:
        return max(least, int(raw))
    except ValueError:
        abort(scim_error(400, f"{name} must be a number.", "invalidValue"))


@bp.get("/Users")
@public
def users():
    return _search(
        request.args.get("filter"),
        _positive(request.args.get("startIndex"), "startIndex", 1, least=1),
        _positive(request.args.get("count"), "count", MAX_RESULTS, least=0),
        _attribute_list("attributes"),
        _attribute_list("excludedAttributes"),
    )


@bp.post("/Users/.search")
@bp.post("/.search")  # the server root's search: only Users are offered
@public
def search_users():
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        return scim_error(400, "The body must be a SCIM SearchRequest in JSON.", "invalidSyntax")
    try:
        search = SearchRequest.model_validate(body, scim_ctx=Context.SEARCH_REQUEST)
    except (ValidationError, SCIMException) as error:
        return scim_error(400, _first_problem(error), "invalidValue")
    return _search(
        search.filter if isinstance(search.filter, str) or search.filter is None else str(search.filter),
        _positive(search.start_index, "startIndex", 1, least=1),
        _positive(search.count, "count", MAX_RESULTS, least=0),
        [str(a) for a in search.attributes] if search.attributes else None,
        [str(a) for a in search.excluded_attributes] if search.excluded_attributes else None,
    )


def _search(raw_filter, start_index: int, count: int, attributes, excluded) -> Response:
    user_name = None
    if raw_filter is not None:
        match = _FILTER.match(raw_filter)
        if match is None:
            return scim_error(400, 'The portal filters Users by userName eq "…" only.', "invalidFilter")
        user_name = json.loads(f'"{match.group(1)}"').strip().lower()
    total, found = queries.people(
        portal_context().db,
        company_id=g.company_id,
        user_name=user_name,
        start_index=start_index,
        count=min(count, MAX_RESULTS),
    )
    resources = [_user_json(person, attributes, excluded) for person in found]
    return scim_json(_list(resources, total=total, start_index=start_index))


def _person_or_404(scim_id: str) -> queries.Person:
    person = queries.person(portal_context().db, company_id=g.company_id, scim_id=scim_id)
    if person is None:
        abort(scim_error(404, "No such user."))
    return person


def _sent_user(context: Context) -> SentUser:
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        abort(scim_error(400, "The body must be a SCIM User in JSON.", "invalidSyntax"))
    try:
        return SentUser.model_validate(body, scim_ctx=context)
    except (ValidationError, SCIMException) as error:
        abort(scim_error(400, _first_problem(error), "invalidValue"))


def _first_problem(error: Exception) -> str:
    if isinstance(error, ValidationError) and error.errors():
        first = error.errors()[0]
        return f"{'.'.join(str(part) for part in first['loc'])}: {first['msg']}"[:300]
    return str(error)[:300]


def _fields(user: SentUser, previous_name: str | None = None):
    try:
        return fields_of(user, previous_name=previous_name)
    except ValueError as error:
        abort(scim_error(400, str(error), "invalidValue"))


@bp.post("/Users")
@public
def create_user():
    fields = _fields(_sent_user(Context.RESOURCE_CREATION_REQUEST))
    try:
        scim_id = operations.create_person(portal_context(), company_id=g.company_id, fields=fields, now=clock.utcnow())
    except ScimRefused as refused:
        return scim_error(refused.status, refused.detail, refused.scim_type)
    person = _person_or_404(scim_id)
    return scim_json(_user_json(person), 201, Location=f"{_base()}/Users/{person.id}")


@bp.get("/Users/<user_id>")
@public
def user(user_id: str):
    person = _person_or_404(user_id)
    return scim_json(_user_json(person, _attribute_list("attributes"), _attribute_list("excludedAttributes")))


@bp.put("/Users/<user_id>")
@public
def replace_user(user_id: str):
    person = _person_or_404(user_id)
    fields = _fields(_sent_user(Context.RESOURCE_REPLACEMENT_REQUEST))
    return _replace(person, fields)


@bp.patch("/Users/<user_id>")
@public
def patch_user(user_id: str):
    """PATCH as Entra ID and Okta send it: `replace` of `active` (Entra sends "False" as text) or of
    attributes by path, or a value object without a path; applied to the User as it stands."""
    person = _person_or_404(user_id)
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        return scim_error(400, "The body must be a SCIM PatchOp in JSON.", "invalidSyntax")
    current = as_sent(to_user(person, f"{_base()}/Users/{person.id}"))
    try:
        patch = PatchOp[SentUser].model_validate(body, scim_ctx=Context.RESOURCE_PATCH_REQUEST)
        patch.patch(current)
    except (ValidationError, SCIMException) as error:
        scim_type = getattr(error, "scim_type", None) or "invalidValue"
        return scim_error(400, _first_problem(error), scim_type)
    return _replace(person, _fields(current, previous_name=person.name))


def _replace(person: queries.Person, fields) -> Response:
    active = person.deactivated_at is None
    try:
        if person.user_id is None:
            operations.replace_invited(
                portal_context(),
                company_id=g.company_id,
                invitation_id=person.invitation_id,
                email=person.email,
                fields=fields,
                was_active=active,
                now=clock.utcnow(),
            )
        else:
            operations.replace_person(
                portal_context().db,
                company_id=g.company_id,
                user_id=person.user_id,
                fields=fields,
                was_active=active,
                now=clock.utcnow(),
            )
    except ScimRefused as refused:
        return scim_error(refused.status, refused.detail, refused.scim_type)
    return scim_json(_user_json(_person_or_404(person.id)))


@bp.delete("/Users/<user_id>")
@public
def delete_user(user_id: str):
    person = _person_or_404(user_id)
    delete = operations.delete_person if person.user_id is not None else operations.delete_invited
    delete(
        portal_context().db,
        company_id=g.company_id,
        **({"user_id": person.user_id} if person.user_id is not None else {"invitation_id": person.invitation_id}),
        was_active=person.deactivated_at is None,
        now=clock.utcnow(),
    )
    return Response(status=204)
