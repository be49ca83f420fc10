"""What a person's own settings answer: their spaces, known voices and vocabulary
(`/app/spaces`, `/app/voices`, `/app/vocabulary`; the rules of `domain.shapes` hold
here too; `openapi_schemas` generates their component schemas)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from transcriber.domain.shapes import FORBID, Doc, Id, Time


@dataclass(frozen=True, slots=True, kw_only=True)
class SpaceBody:
    """A space the asking person is a member of (docs/sharing.md), with their role."""

    __pydantic_config__ = FORBID
    id: Id
    name: Annotated[str, Doc(minLength=1, maxLength=64)]
    created_at: Time
    role: Annotated[str, Doc(enum=["viewer", "editor", "admin"])]
    default: Annotated[bool, Doc("The person's uploads go here when they name no "
                                 "space")] = False


@dataclass(frozen=True, slots=True, kw_only=True)
class VoiceBody:
    """One of the owner's known voices: its name and counts (never its embeddings)."""

    __pydantic_config__ = FORBID
    id: Id
    name: Annotated[str, Doc(maxLength=64)]
    records: Annotated[int, Doc("Records it was learned from", minimum=0)]
    talk_ms: Annotated[int, Doc("Speech it was learned from", minimum=0)]
    created_at: Time
    updated_at: Time


@dataclass(frozen=True, slots=True, kw_only=True)
class VocabularyBody:
    """The names and terms the recognizer is told (`GET/PUT /app/vocabulary`)."""

    __pydantic_config__ = FORBID
    terms: Annotated[list[Annotated[str, Doc(minLength=1, maxLength=64)]], Doc(
        "The person's own, in their order (at most 200)", maxItems=200)]
    voice_names: Annotated[list[str], Doc(
        "The names of the person's known voices: told to the recognizer too, after the "
        "terms (read only: rename a voice to change one)")]


@dataclass(frozen=True, slots=True, kw_only=True)
class SpaceVocabularyBody:
    """The names and terms told to the recognizer for every record in a space, after
    the record owner's own (`GET/PUT /app/spaces/{id}/vocabulary`)."""

    __pydantic_config__ = FORBID
    terms: Annotated[list[Annotated[str, Doc(minLength=1, maxLength=64)]], Doc(
        "The space's, in their order (at most 200)", maxItems=200)]
