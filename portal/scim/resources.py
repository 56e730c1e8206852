"""The portal's people as SCIM 2.0 Users (RFC 7643), with scim2-models: what is read and written.

userName is the address; `name` (formatted, else given and family names) and `displayName` are the
person's name; `active` is "not deactivated"; `emails` holds the address as the primary work email;
the enterprise extension's `department` and `employeeNumber`, and `externalId`, are stored as sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar

from scim2_models import (
    URN,
    ComplexAttribute,
    Context,
    Email,
    EnterpriseUser,
    Extension,
    Meta,
    Mutability,
    Required,
    Resource,
    ResponseParameters,
    Uniqueness,
    User,
)

from portal.core.text import normalise_email
from portal.scim.queries import Person

ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"

# What a directory may send: any User of RFC 7643 with the enterprise extension (Entra ID and Okta
# send more than the portal keeps; what it does not keep is ignored).
SentUser = User[EnterpriseUser]


class PortalName(ComplexAttribute):
    formatted: str | None = None
    """The person's name as the portal shows it (from formatted, else givenName and familyName)."""


class PortalEnterprise(Extension):
    """The enterprise extension's attributes the portal keeps."""

    __schema__ = URN(ENTERPRISE)

    employee_number: str | None = None
    department: str | None = None


class PortalUserResource(Resource):
    """The User attributes the portal keeps and serves (its /Schemas say exactly these)."""

    __schema__ = URN("urn:ietf:params:scim:schemas:core:2.0:User")

    user_name: Annotated[str | None, Uniqueness.server, Required.true] = None
    name: PortalName | None = None
    Name: ClassVar[type[ComplexAttribute]] = PortalName
    # Always true or false for the portal (a deactivated account is false): a value, never absent.
    active: Annotated[bool | None, Required.true] = None
    # The address again, as directories expect to read it: set through userName, so read-only here.
    emails: Annotated[list[Email] | None, Mutability.read_only] = None


PortalUser = PortalUserResource[PortalEnterprise]


@dataclass(frozen=True)
class Fields:
    """What a User sent by the directory says, in the portal's terms."""

    email: str
    name: str
    active: bool
    department: str | None
    employee_number: str | None
    external_id: str | None


def to_user(person: Person, location: str) -> PortalUser:
    user = PortalUser(
        id=str(person.id),
        user_name=person.email,
        external_id=person.scim_external_id,
        name=PortalName(formatted=person.name) if person.name else None,
        active=person.deactivated_at is None,
        emails=[Email(value=person.email, primary=True, type="work")],
        meta=Meta(
            resource_type="User",
            created=person.created_at,
            last_modified=person.scim_updated_at or person.created_at,
            location=location,
        ),
    )
    user[PortalEnterprise] = PortalEnterprise(department=person.department, employee_number=person.employee_number)
    return user


def as_json(user: PortalUser, attributes: list[str] | None = None, excluded: list[str] | None = None) -> dict:
    """The User as JSON, with only `attributes` (or without `excluded`), as RFC 7644 section 3.9 asks."""
    parameters = None
    if attributes or excluded:
        parameters = ResponseParameters[PortalUser](attributes=attributes or None, excluded_attributes=excluded or None)
    return user.model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE, response_parameters=parameters)


def as_sent(user: PortalUser) -> SentUser:
    """The portal's User as a directory's, for a PATCH to apply to."""
    return SentUser.model_validate(
        user.model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE), scim_ctx=Context.RESOURCE_QUERY_RESPONSE
    )


def fields_of(user: SentUser, *, previous_name: str | None = None) -> Fields:
    """The portal's fields from a User; ValueError with the reason when userName is not an address.

    The name is name.formatted, else givenName and familyName, else displayName; after a PATCH
    (`previous_name`), the one of them that changed wins."""
    if not user.user_name or "@" not in user.user_name:
        raise ValueError("userName must be the person's email address")
    candidates = [
        user.name.formatted if user.name else None,
        " ".join(part for part in (user.name.given_name, user.name.family_name) if part) if user.name else None,
        user.display_name,
    ]
    present = [candidate.strip() for candidate in candidates if candidate and candidate.strip()]
    changed = [candidate for candidate in present if candidate != previous_name]
    name = (changed or present or [""])[0]
    extension = user[EnterpriseUser]
    return Fields(
        email=normalise_email(user.user_name),
        name=name[:200],
        active=user.active is not False,
        department=(extension.department if extension else None) or None,
        employee_number=(extension.employee_number if extension else None) or None,
        external_id=user.external_id or None,
    )
