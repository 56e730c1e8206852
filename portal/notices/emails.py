"""A plain notice from the portal team (operator emails, e.g. sent from a Flask shell).

The subject is the operator's own words, sent as written; the layout around the body is in the
intent's `language`."""

from __future__ import annotations

from portal.outbox import Family

NOTICE = Family(
    name="notice",
    id_prefix="ntc",
    template="notice",
    template_version=1,
    subject=lambda data: data["subject"],
)

FAMILIES = (NOTICE,)
