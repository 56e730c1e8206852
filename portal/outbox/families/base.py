"""What every email family provides: an ID prefix, a template, and how to build its message."""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Callable

from portal.outbox.rendering import RenderedEmail, render_bodies
from portal.settings import Settings


@dataclass(frozen=True)
class Family:
    name: str                 # the `family` column and tag
    id_prefix: str            # outbox IDs are f"{id_prefix}_{32 hex digits}"
    template: str             # templates/emails/<template>.{html,txt}
    template_version: int
    subject: Callable[[dict], str]
    reply_to: Callable[[dict, Settings], str | None] = lambda data, settings: None
    # Values computed at render time from stored input (e.g. a link that needs SECRET_KEY).
    prepare: Callable[[dict, Settings], dict] = lambda data, settings: data

    def new_outbox_id(self) -> str:
        return f"{self.id_prefix}_{uuid.uuid4().hex}"

    def render(self, data: dict, settings: Settings) -> RenderedEmail:
        data = self.prepare(data, settings)
        html, text = render_bodies(self.template, {**data, "base_url": settings.public_base_url})
        return RenderedEmail(
            from_address=settings.email_from,
            reply_to=self.reply_to(data, settings),
            subject=self.subject(data),
            html=html,
            text=text,
            tags=(("template", self.template), ("template_version", str(self.template_version))),
        )
