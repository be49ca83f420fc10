"""What the text-while-recording route answers (`GET /app/uploads/{id}/text`; the
rules of `domain.shapes` hold here too; `openapi_schemas` generates its schema)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar

from transcriber.domain.shapes import FORBID, Count, Doc, Id


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveTextBody:
    """The text so far of an upload going on: a preview, never the record's transcript
    (the finished upload becomes a record the pipeline recognizes as any other)."""

    __pydantic_config__ = FORBID
    ABSENT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset({"record_id"})
    available: Annotated[bool, Doc(
        "False where this server cannot show text while recording (its recognizer "
        "does not take audio in memory, or no recognizer runs in this process)")]
    text: Annotated[str, Doc("What was recognized so far, as one line")]
    heard_ms: Annotated[Count, Doc(
        "How much of the upload's audio the text covers (from its start)")]
    record_id: Annotated[Id | None, Doc(
        "Once the upload is finished: the record it became (its card shows the "
        "transcript)")] = None
