"""Email families as the engine sees them, and the registry that maps an outbox ID to its family.

The engine knows no family by name: each area declares its own in `<area>/emails.py`, and
`portal/email_families.py` lists them all once. Every ID the portal builds must be recognised
by the registry (a property test checks each family), or the consumer would fail its row as
`outbox_id_unclaimed`.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime

from markupsafe import escape
from uuid6 import uuid7

from portal.core.settings import Settings
from portal.outbox.ground.queues import BULK_EMAIL_QUEUE, EMAIL_QUEUE
from portal.outbox.ground.rendering import Attachment, RenderedEmail, render_bodies
from portal.outbox.ground.retry import RetryPolicy

OUTBOX_ID = re.compile(r"^([a-z]{3})_([0-9a-f]{32})$")


def new_row_id(prefix: str) -> str:
    """f"{prefix}_{32 hex digits}", a UUIDv7: an ID made later sorts after one made earlier, so the
    rows a campaign adds (and every index and table keyed by their IDs) land at the right edge of
    each B-tree, where a random ID would dirty one random page of each per row. Measured with
    bench/outbox_throughput.py on the batch path: the publish step's write turns took half as long,
    and the WAL writes (system time, I/O wait) fell by a third. Still 74 random bits: not guessable."""
    return f"{prefix}_{uuid7().hex}"


def _no_reply_to(data: dict, settings: Settings) -> str | None:
    return None


def _as_stored(data: dict, settings: Settings) -> dict:
    return data


def _no_attachment(data: dict, settings: Settings) -> Attachment | None:
    return None


def _no_headers(data: dict, settings: Settings) -> dict[str, str]:
    return {}


# The two streams an email goes out in. Transactional: what a person's own action or account asks
# for (an invitation, a reset), from EMAIL_FROM. Broadcast: mail sent to many at once (a
# newsletter), from its own sender, so a complaint about it never weighs on transactional mail.
TRANSACTIONAL, BROADCAST = "transactional", "broadcast"
STREAMS = (TRANSACTIONAL, BROADCAST)


def _stream_sender(stream: str, settings: Settings) -> str:
    """The sender of a stream: the one place that maps a stream to its settings variable."""
    return settings.campaign_from if stream == BROADCAST else settings.email_from


@dataclass(frozen=True)
class Family:
    name: str  # the `family` column and tag
    id_prefix: str  # outbox IDs are f"{id_prefix}_{32 hex digits}"
    template: str  # templates/emails/<template>.{html,txt}
    template_version: int
    subject: Callable[[dict], str]
    reply_to: Callable[[dict, Settings], str | None] = _no_reply_to
    # Values computed at render time from stored input (e.g. a link that needs SECRET_KEY). The
    # input it gets also holds `rendered_at`, the render's moment (a UTC datetime), so a value
    # that states when the email was prepared comes from the caller's clock, not the wall's.
    prepare: Callable[[dict, Settings], dict] = _as_stored
    # The one attachment the frozen payload holds (e.g. a report's PDF), built from the stored input.
    attachment: Callable[[dict, Settings], Attachment | None] = _no_attachment
    # None: the settings' schedule (OUTBOX_RETRY_*, OUTBOX_MAX_ATTEMPTS).
    retry: RetryPolicy | None = None
    # Extra message headers, built from the stored input (a campaign's List-Unsubscribe).
    headers: Callable[[dict, Settings], dict[str, str]] = _no_headers
    # EMAIL_QUEUE, or BULK_EMAIL_QUEUE for a family that sends thousands at once: workers take
    # the bulk queue only when the transactional one is empty.
    queue: str = EMAIL_QUEUE
    # Whether rows of this family published together may ride in one provider request (send/batch.py):
    # a family sent to many people at once, without attachments (Resend refuses them in a batch).
    batchable: bool = False
    # Prepared values that differ from one recipient of a shared input to the next and that the
    # templates only print (`{{ name }}`), never test, filter or loop over (a campaign's
    # unsubscribe link), or do not read at all (its user ID). `render_many` renders the bodies
    # once for every member whose other values are equal and prints each member's own into them.
    personal: tuple[str, ...] = ()
    # TRANSACTIONAL or BROADCAST: the sender (EMAIL_FROM or CAMPAIGN_FROM) and the `stream` tag.
    stream: str = TRANSACTIONAL

    def __post_init__(self):
        if self.stream not in STREAMS:
            raise ValueError(f"family {self.name}: stream must be one of {', '.join(STREAMS)}")
        if not re.fullmatch(r"[a-z]{3}", self.id_prefix):
            raise ValueError(f"family {self.name}: id_prefix must be three lower-case letters")
        if self.queue not in (EMAIL_QUEUE, BULK_EMAIL_QUEUE):
            raise ValueError(f"family {self.name}: queue must be {EMAIL_QUEUE} or {BULK_EMAIL_QUEUE}")

    def new_outbox_id(self) -> str:
        return new_row_id(self.id_prefix)

    def render(self, data: dict, settings: Settings, *, now: datetime) -> RenderedEmail:
        data = self.prepare({**data, "rendered_at": now}, settings)
        return self._rendered(data, render_bodies(self.template, self._context(data, settings)), settings)

    def render_many(self, inputs: list[dict], settings: Settings, *, now: datetime) -> list[RenderedEmail | Exception]:
        """`render` of each input, in order; an input that does not render gives its exception.

        The same bytes as `render`, for less work: with `personal` values, the members whose
        other values are equal share one render of the bodies (a campaign's batch: one render
        instead of a hundred). Each shared render is checked against a whole render of the member
        it was made for; if printing that member's values into it does not give the same bytes
        (a template that filters or tests a personal value), every member renders alone."""
        shared: dict[str, SharedBodies | None] = {}
        rendered = []
        for data in inputs:
            try:
                data = self.prepare({**data, "rendered_at": now}, settings)
                rendered.append(self._rendered(data, self._bodies(data, settings, shared), settings))
            except Exception as error:  # noqa: BLE001  (the caller settles this member alone)
                rendered.append(error)
        return rendered

    def _bodies(self, data: dict, settings: Settings, shared: dict) -> tuple[str, str]:
        context = self._context(data, settings)
        if not self.personal:
            return render_bodies(self.template, context)
        common = repr(sorted((name, value) for name, value in context.items() if name not in self.personal))
        if common not in shared:
            whole = render_bodies(self.template, context)  # what this member gets, whatever follows
            try:
                bodies = SharedBodies.render(self.template, context, self.personal)
                shared[common] = bodies if bodies.fill(context) == whole else None
            except Exception:  # noqa: BLE001  (a template that computes with a personal value)
                shared[common] = None
            return whole
        bodies = shared[common]
        return bodies.fill(context) if bodies is not None else render_bodies(self.template, context)

    @staticmethod
    def _context(data: dict, settings: Settings) -> dict:
        return {**data, "base_url": settings.public_base_url}

    def _rendered(self, data: dict, bodies: tuple[str, str], settings: Settings) -> RenderedEmail:
        html, text = bodies
        attachment = self.attachment(data, settings)
        return RenderedEmail(
            from_address=_stream_sender(self.stream, settings),
            reply_to=self.reply_to(data, settings),
            subject=self.subject(data),
            html=html,
            text=text,
            tags=(
                ("template", self.template),
                ("template_version", str(self.template_version)),
                ("stream", self.stream),
            ),
            attachments=(attachment,) if attachment else (),
            headers=tuple(self.headers(data, settings).items()),
        )


@dataclass(frozen=True)
class SharedBodies:
    """A template's bodies rendered with a marker in place of each personal value."""

    html: str
    text: str
    markers: dict[str, str]

    @classmethod
    def render(cls, template: str, context: dict, personal: tuple[str, ...]) -> SharedBodies:
        # Letters and digits only: autoescaping leaves a marker as it is, and no body holds one.
        markers = {name: f"personal{secrets.token_hex(16)}" for name in personal}
        html, text = render_bodies(template, {**context, **markers})
        return cls(html, text, markers)

    def fill(self, context: dict) -> tuple[str, str]:
        html, text = self.html, self.text
        for name, marker in self.markers.items():
            # As the template prints it: escaped in the HTML part (autoescape), as it is in the text.
            html = html.replace(marker, str(escape(context[name])))
            text = text.replace(marker, str(context[name]))
        return html, text


class FamilyRegistry:
    """Every family the portal sends, found by name or by the prefix of an outbox ID."""

    def __init__(self, families: Iterable[Family]):
        self._by_name: dict[str, Family] = {}
        self._by_prefix: dict[str, Family] = {}
        for family in families:
            if family.name in self._by_name:
                raise ValueError(f"two families are named {family.name}")
            if family.id_prefix in self._by_prefix:
                raise ValueError(
                    f"families {family.name} and {self._by_prefix[family.id_prefix].name} share an ID prefix"
                )
            self._by_name[family.name] = family
            self._by_prefix[family.id_prefix] = family

    def __iter__(self):
        return iter(self._by_name.values())

    def __getitem__(self, name: str) -> Family:
        return self._by_name[name]

    def for_outbox_id(self, outbox_id: str) -> Family | None:
        match = OUTBOX_ID.match(outbox_id)
        return self._by_prefix.get(match.group(1)) if match else None

    def batchable_names(self) -> set[str]:
        return {family.name for family in self._by_name.values() if family.batchable}

    def queue_for(self, outbox_id: str) -> str:
        """The queue an outbox row's message goes to (the transactional one for an unknown ID)."""
        family = self.for_outbox_id(outbox_id)
        return family.queue if family else EMAIL_QUEUE
