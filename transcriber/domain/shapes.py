"""What `/app/` answers: one frozen dataclass per JSON shape (docs/api.md, "Shapes").

The routes build these and `responses.json_response` writes them with orjson
(which serialises dataclasses itself); `openapi_schemas` generates the OpenAPI
document's component schemas from the same classes with pydantic, imported
only when the document is built. So a field is declared once: its name and
type here, the constraints a client may rely on (`Doc`) beside it.

The bulk of an answer (a card's utterances and their words, tens of thousands in
a long recording; search matches, which the match pool's processes send as
dicts) are `TypedDict`s: plain dicts, built and written several times faster
than dataclasses (docs/api.md, "Shapes"); pydantic reads them the same way.

Names: a class is the component of its name without `Body` (`CardBody` is
`#/components/schemas/Card`); `Body` keeps each class name meaning one thing
in the package (the reads have their own `RecordCard`, `TimelineEvent`, …).
Rules the generator follows: a field without a default is required; a field
named in the class's `ABSENT_WHEN_NONE` is left out of the answer when None
(`to_json`), so its schema neither requires it nor admits null; a class with
`FORBID` allows no other property.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Annotated, Any, Generic, TypeVar

import orjson
from typing_extensions import TypedDict

from transcriber.domain.quality import REASONS, VERDICTS
from transcriber.domain.stages import HaltReason, Stage

if TYPE_CHECKING:
    from pydantic import GetJsonSchemaHandler
    from pydantic_core import CoreSchema

T = TypeVar("T")


class Doc:
    """JSON Schema keywords for a field (or a type), added to what its Python type says.

    pydantic reads it from `Annotated[...]` when the document is built (its
    `__get_pydantic_json_schema__` hook); nothing imports pydantic to declare one."""

    __slots__ = ("keywords",)

    def __init__(self, description: str | None = None, **keywords: Any) -> None:
        self.keywords = dict(keywords)
        if description is not None:
            self.keywords["description"] = description

    def __get_pydantic_json_schema__(self, core_schema: CoreSchema,
                                     handler: GetJsonSchemaHandler) -> dict[str, Any]:
        schema = dict(handler(core_schema))
        schema.update(self.keywords)
        return schema


# pydantic's config of a shape, as a plain dict (pydantic is not imported here):
# another property is refused (`additionalProperties: false`).
FORBID: Any = {"extra": "forbid"}

Time = Annotated[str, Doc(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")]
ID_PATTERN = "^[0-7][0-9a-hjkmnp-tv-z]{25}$"
Id = Annotated[str, Doc(pattern=ID_PATTERN)]
SPEAKER = "^S[1-9][0-9]?$"
OriginField = Annotated[str | None, Doc(enum=["auto", "human", None])]
Count = Annotated[int, Doc(minimum=0)]


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorDetail:
    __pydantic_config__ = FORBID
    code: str
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorBody:
    """Every 4xx/5xx answer of `/app/` (`web.errors`)."""

    __pydantic_config__ = FORBID
    error: ErrorDetail


@dataclass(frozen=True, slots=True, kw_only=True)
class UserBody:
    __pydantic_config__ = FORBID
    id: Id
    login: Annotated[str, Doc(maxLength=255)]
    name: Annotated[str, Doc(maxLength=255)]
    email: str
    created_at: Time


@dataclass(frozen=True, slots=True, kw_only=True)
class HaltBody:
    __pydantic_config__ = FORBID
    at: Time
    reason: Annotated[str, Doc(enum=[r.value for r in HaltReason])]
    message: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ProgressBody:
    """How far a record on its way to a transcript is: waiting in the queue, normalized
    or recognized; parts of the recognition saved, the whole way as a fraction (a
    running part's share estimated from the time since it started), and the seconds
    left until the recognition is done at the speed this host measured (before any
    measurement, the recognizer's warm-up figure)."""

    __pydantic_config__ = FORBID
    stage: Annotated[str, Doc(enum=["queue", "normalize", "recognize"])]
    done: Count
    total: Annotated[int, Doc(minimum=1)]
    fraction: Annotated[float, Doc(minimum=0, maximum=1)]
    eta_seconds: Annotated[int | None, Doc(minimum=0)]


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribedBody:
    """Who wrote the title, brief and topics: `auto` (the describer), `human` (a person
    set or cleared it; the describer never writes it again), null (nobody yet)."""

    __pydantic_config__ = FORBID
    title: OriginField
    brief: OriginField
    topics: OriginField
    by: Annotated[str | None, Doc("The describer of the automatic fields: `extractive` or "
                                  "`openai:<model>`; null when none was written")]
    state: Annotated[str | None, Doc(
        "The description's job: written after the record is `done` (and again after a "
        "re-transcription), never holding the record back; null when none was asked for",
        enum=["pending", "done", "failed", None])]


Topics = Annotated[list[Annotated[str, Doc(minLength=1, maxLength=64)]], Doc(maxItems=5)]


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordBody:
    """A record as a page of the list shows it (the head of its card). Open: the card
    and a search result add to it."""

    id: Id
    title: str
    original_filename: Annotated[str, Doc(maxLength=255)]
    source: Annotated[str, Doc(enum=["http", "telegram"])]
    via: Annotated[str, Doc(enum=["web", "api", "cli", "folder"])] | None = None
    """How an `http` record came in: the web app, an API client, the command line, the
    watched folder (null: Telegram's, or stored before this was kept)."""
    stage: Annotated[str, Doc(enum=[s.value for s in Stage])]
    halt: HaltBody | None
    progress: ProgressBody | None
    duration_ms: Count
    size_bytes: Count
    created_at: Time
    updated_at: Time
    described: DescribedBody
    # Always written; not required, because a `record.deleted` webhook sends the record
    # as stored when the event happened, possibly before these fields existed.
    brief: Annotated[str, Doc(maxLength=2000)] = ""
    topics: Topics = field(default_factory=list)
    quality_verdict: Annotated[str | None, Doc(
        "The transcript's quality verdict (the list's mark); null: no report",
        enum=[*VERDICTS, None])] = None
    space: Annotated[str | None, Doc(
        "The space the record is in (docs/sharing.md); null: its owner's own")] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SpanBody:
    __pydantic_config__ = FORBID
    start_ms: Count
    end_ms: Count


@dataclass(frozen=True, slots=True, kw_only=True)
class QualityBody:
    """How much of the speech the recognizer heard, made when the transcript was
    stored (a correction keeps it: it is the recognizer's report)."""

    __pydantic_config__ = FORBID
    verdict: Annotated[str, Doc(enum=list(VERDICTS))]
    reasons: list[Annotated[str, Doc(enum=list(REASONS))]]
    speech_seconds: Annotated[float, Doc(minimum=0)]
    unclear_seconds: Annotated[float, Doc(minimum=0)]
    unclear_spans: list[SpanBody]
    repeats_removed: Count
    low_confidence_share: Annotated[float | None, Doc(
        "Share of the words below the confidence threshold; null when the recognizer "
        "gave no word confidence", minimum=0, maximum=1)]
    model: Annotated[str | None, Doc(
        "The model that made the transcript the report is about (as the card's `model`); "
        "null in a report made before it was kept")] = None

    @classmethod
    def of(cls, report: Mapping[str, Any]) -> QualityBody:
        """From the report's public dict (`Quality.as_dict`, also how it is stored)."""
        return cls(**{**report, "unclear_spans": [SpanBody(**s)
                                                   for s in report["unclear_spans"]]})


class WordBody(TypedDict):
    start_ms: int
    end_ms: int
    text: str
    probability: Annotated[float | None, Doc("The recognizer's confidence; null when it "
                                             "gave none", minimum=0, maximum=1)]


class UtteranceBody(TypedDict):
    index: Count
    start_ms: int
    end_ms: int
    channel: int
    speaker: Annotated[Annotated[str, Doc(pattern=SPEAKER)] | None, Doc(
        "S1, S2, … when speakers were told apart, else null")]
    text: str
    words: Annotated[list[WordBody], Doc(
        "The recognizer's words with their confidence; empty when it gave none or the "
        "line was corrected")]


@dataclass(frozen=True, slots=True, kw_only=True)
class SuggestionBody:
    """An unnamed speaker sounds like one of the owner's known voices: confirm it (it
    becomes the name) or reject it."""

    __pydantic_config__ = FORBID
    name: Annotated[str, Doc(maxLength=64)]
    profile_id: Id
    similarity: Annotated[float, Doc("Cosine similarity of the voices", minimum=-1,
                                     maximum=1)]


@dataclass(frozen=True, slots=True, kw_only=True)
class SpeakerBody:
    __pydantic_config__ = FORBID
    name: Annotated[str, Doc("The owner's name for the speaker; empty when none",
                             maxLength=64)]
    talk_ms: Count
    suggested: SuggestionBody | None


@dataclass(frozen=True, slots=True, kw_only=True)
class FileCopyBody:
    __pydantic_config__ = FORBID
    size_bytes: Count
    format: str
    duration_ms: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class FilesBody:
    __pydantic_config__ = FORBID
    original: FileCopyBody | None
    normalized: FileCopyBody | None


@dataclass(frozen=True, slots=True, kw_only=True)
class LanguageBody:
    __pydantic_config__ = FORBID
    requested: str
    detected: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class TimelineEventBody:
    __pydantic_config__ = FORBID
    at: Time
    origin: Annotated[str, Doc(enum=["pipeline", "human"])]
    step: str
    outcome: Annotated[str, Doc(enum=["done", "failed", "halted", "resumed"])]
    duration_ms: int | None
    by: Annotated[str | None, Doc("The login of the person who made the change; null: "
                                  "the pipeline")] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ShareBody:
    """A record shared with one person, or a space's member: the login and its role."""

    login: str
    role: Annotated[str, Doc(enum=["viewer", "editor", "admin"])]
    created_at: Time


@dataclass(frozen=True, slots=True, kw_only=True)
class CardBody(RecordBody):
    """The record card (`GET /app/audiorecords/{id}`); a webhook's payload carries it
    without `transcript` and `utterances`."""

    revision: Annotated[int, Doc("The transcript's revision: send it back with a "
                                 "correction", minimum=0)]
    language: LanguageBody
    files: FilesBody
    transcript: str | None
    quality: QualityBody | None
    model: Annotated[str | None, Doc(
        "The model that made the transcript (`whisper-base`, or a model's name from the "
        "operator's models folder; several joined by \", \"); null before it is recognized")]
    utterances: list[UtteranceBody]
    speakers: Annotated[dict[str, SpeakerBody], Doc(
        "Each speaker label of the utterances", propertyNames={"pattern": SPEAKER})]
    timeline: list[TimelineEventBody]
    poll_after_ms: Annotated[int | None, Doc(
        "Poll the card no sooner than this; null when the record is done or halted and "
        "its description is not pending (nothing changes by itself).", minimum=1)]
    role: Annotated[str | None, Doc(
        "What the asking person holds on the record: owner, admin, editor or viewer "
        "(docs/sharing.md); null in a webhook's payload", enum=[
            "owner", "admin", "editor", "viewer", None])] = None
    shares: Annotated[list[ShareBody] | None, Doc(
        "The people the record is shared with; null unless the asking person may share "
        "it")] = None


for _bulk in (WordBody, UtteranceBody):
    setattr(_bulk, "__pydantic_config__", FORBID)  # noqa: B010 - a TypedDict's body takes no value


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicBody:
    __pydantic_config__ = FORBID
    name: str
    records: Count


@dataclass(frozen=True, slots=True, kw_only=True)
class Page(Generic[T]):
    """One keyset page: `next_cursor` asks for the next one (null: the last page)."""

    __pydantic_config__ = FORBID
    items: list[T]
    next_cursor: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Items(Generic[T]):
    """A whole list (no paging)."""

    __pydantic_config__ = FORBID
    items: list[T]


@functools.cache
def _names(shape: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(shape))


def same_named(source: object, shape: type) -> dict[str, Any]:
    """The fields of `shape` that `source` (a read) has under the same name, as they are:
    a new field of the card flows from the read to the answer with no line between
    (a view writes only the fields it renders otherwise)."""
    return {name: getattr(source, name) for name in _names(shape) if hasattr(source, name)}


def _present(shape: Any) -> dict[str, Any]:
    """A shape's fields as orjson writes them, less one absent when None."""
    kept = _FIELDS.get(type(shape))
    if kept is None:
        absent: frozenset[str] = getattr(shape, "ABSENT_WHEN_NONE", frozenset())
        kept = _FIELDS[type(shape)] = tuple((f.name, f.name in absent) for f in fields(shape))
    return {name: value for name, optional in kept
            if (value := getattr(shape, name)) is not None or not optional}


_FIELDS: dict[type, tuple[tuple[str, bool], ...]] = {}


def to_json(payload: Any) -> bytes:
    """The answer's JSON: orjson's, each shape as its present fields."""
    return orjson.dumps(payload, default=_present, option=orjson.OPT_PASSTHROUGH_DATACLASS)


def plain(payload: Any) -> Any:
    """The answer as JSON-ready dicts and lists (a webhook's payload edits the card's)."""
    return orjson.loads(to_json(payload))
