"""The describer port: what writes a record's title, brief and topics, and what it is given.

The adapters are `transcriber.providers.describe.extractive` (offline, the default) and
`transcriber.providers.describe.openai` (an OpenAI-compatible chat-completions
endpoint); the actor that runs them is `transcriber.followups.describe`. A
describer raises `TransientFailure` for what another try may cure (network,
timeouts, 429, 5xx) and `PermanentFailure` for what it cannot (a 4xx refusal);
either way the record stays `done`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from transcriber.domain.transcripts import Utterance

if TYPE_CHECKING:  # the port names the type; loading it (and the stemmers) is the adapters' part
    from transcriber.domain.describe import Description


@dataclass(frozen=True, slots=True, kw_only=True)
class ArchiveCounts:
    """How many of the owner's records there are, and how many hold each stem asked for."""

    records: int = 0
    holding: Mapping[str, int] = field(default_factory=dict)


class ArchiveTerms(Protocol):
    async def counts(self, stems: Sequence[str]) -> ArchiveCounts:
        """The owner's record count and, for each stem, the records whose transcript holds it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Material:
    """What a describer is given: one record's transcript and its owner's topics.

    Transcript text: never logged, never put into an error message."""

    record_id: str
    language: str
    """The transcript's language as the recognizer detected it (or as asked); empty: unknown."""
    duration_ms: int
    utterances: tuple[Utterance, ...]
    owner_topics: tuple[str, ...] = ()
    """The owner's topic names (preferred over new ones)."""
    archive: ArchiveTerms | None = None
    """The owner's archive, to weigh words by how rare they are in it (None: not weighed)."""


class Describer(Protocol):
    name: str
    """`extractive`, `openai:<model>`: the card's `described.by`."""

    async def describe(self, material: Material) -> Description:
        """The description, fitted to the limits of `transcriber.domain.describe`."""
