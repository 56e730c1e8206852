"""A batch as one delivery holds it after its claim or seal: its members in position order and
their frozen payloads, as read back (batch/claim.py claims it, batch/seal.py seals it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from portal.outbox.ground.rendering import RenderedEmail
from portal.outbox.ground.statuses import UNSETTLED
from portal.outbox.send.freeze import validated_by_row


@dataclass(frozen=True)
class BatchMember:
    id: str
    recipient: str
    status: str
    attempt_count: int
    outcome_unknown: bool
    first_attempt_at: str | None
    provider_message_id: str | None
    template_input: str
    created_at: str | None

    @property
    def settled(self) -> bool:
        return self.provider_message_id is not None or self.status not in UNSETTLED


@dataclass(frozen=True)
class ClaimedBatch:
    id: str
    family: str
    provider_key: str
    attempt_count: int  # the batch claim's number: every settle carries it
    sealed_at: str | None
    request_count: int
    claim_token: str | None  # written by the claim; the seal's guards ask for it
    members: tuple[BatchMember, ...]  # in position order: the request's list
    # Frozen payloads read with the claim, by member ID (a sealed batch's retry rebuilds its list).
    frozen: tuple = ()
    sealed_by_claim: bool = False  # the claim stored every member's first payload and sealed, in its write
    # First-attempt payloads rendered after the claim (freeze.payload_of), for the seal to store.
    to_freeze: tuple = ()

    @cached_property
    def messages(self) -> dict[str, RenderedEmail]:
        """The frozen payloads, validated (FreezeError if one is not whole), by member ID: once per
        claim or seal, though the delivery asks before its seal and again before its request."""
        return validated_by_row(self.frozen)

    @property
    def sealed(self) -> bool:
        return self.sealed_at is not None

    @property
    def window_start(self) -> str | None:
        """When the provider may first have seen the key: the seal of its first request."""
        return self.sealed_at

    @property
    def outcome_unknown(self) -> bool:
        return any(member.outcome_unknown for member in self.members)

    @property
    def unsettled(self) -> tuple[BatchMember, ...]:
        return tuple(member for member in self.members if not member.settled)

    @property
    def attempt(self) -> int:
        """The members' attempt number (they move together; the highest, if one was ever behind)."""
        return max((member.attempt_count for member in self.unsettled), default=0)

    @property
    def carrier(self) -> str:
        """A member whose ID can carry the batch's next message (the consumer routes it here)."""
        return (self.unsettled or self.members)[0].id


def if_still_ours(batch: ClaimedBatch, token: str) -> ClaimedBatch | None:
    """A batch read after its claim's (or seal's) write committed (Database.write_steps_then_read):
    None if another delivery took the claim over in between, or the read would hand this delivery
    that one's claim."""
    return batch if batch.claim_token == token else None


def claimed_from(batch, members, frozen: Sequence) -> ClaimedBatch:
    """The batch from the results of `batch_reads` and its members' frozen payloads as rows (only
    the current members' are kept, as a read of them would)."""
    members = tuple(
        BatchMember(**{**row, "outcome_unknown": bool(row["outcome_unknown"])}) for row in members.mappings().all()
    )
    ids = {member.id for member in members}
    return ClaimedBatch(
        **batch.mappings().first(),
        members=members,
        frozen=tuple(row for row in frozen if row["outbox_id"] in ids),
    )
