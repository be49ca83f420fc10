"""What the ways in for scripts answer: webhooks, personal access tokens and OpenAI's
`/v1/` (the rules of `domain.shapes` hold here too; `openapi_schemas` generates their
component schemas beside the archive's)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal

from typing_extensions import TypedDict

from transcriber.domain.shapes import (
    FORBID,
    ID_PATTERN,
    Count,
    Doc,
    Id,
    QualityBody,
    RecordBody,
    Time,
)
from transcriber.domain.tokens import NAME_MAX
from transcriber.domain.webhooks import DELIVERY_HEADER, EVENTS

DELIVERIES_SHOWN = 50
"""A webhook's latest deliveries `GET /app/webhooks/{id}/deliveries` answers."""

EventField = Annotated[str, Doc(enum=list(EVENTS))]


@dataclass(frozen=True, slots=True, kw_only=True)
class HealthBody:
    """`failing` while its target does not answer at all (timeout, connection, name,
    refused address): its deliveries wait until `next_attempt_at`."""

    __pydantic_config__ = FORBID
    state: Annotated[str, Doc(enum=["ok", "failing"])]
    last_error: str | None
    next_attempt_at: Time | None


@dataclass(frozen=True, slots=True, kw_only=True)
class WebhookBody:
    """A webhook (open: the answer that creates it adds its secret)."""

    id: Id
    url: Annotated[str, Doc("The whole URL; for a `read` token only its scheme, host and "
                            "port, then `/…` (URLs often carry the receiver's secret)")]
    events: list[EventField]
    created_at: Time
    disabled_at: Time | None
    disabled_reason: Annotated[str | None, Doc("`gone`: the receiver answered 410")]
    health: HealthBody


@dataclass(frozen=True, slots=True, kw_only=True)
class WebhookCreatedBody(WebhookBody):
    secret: Annotated[str, Doc("Shown this once: sign checks need it")]


@dataclass(frozen=True, slots=True, kw_only=True)
class DeliveryBody:
    __pydantic_config__ = FORBID
    id: Id
    event: EventField
    record_id: Id
    status: Annotated[str, Doc(enum=["pending", "delivered", "failed"])]
    attempts: Count
    next_attempt_at: Time | None
    last_status: Annotated[int | None, Doc("The HTTP status of the last answer")]
    last_error: Annotated[str | None, Doc(
        "Why the last attempt got no answer (timeout, connect, dns, tls, refused_<reason>, "
        "…), or why it failed")]
    created_at: Time
    finished_at: Time | None


@dataclass(frozen=True, slots=True, kw_only=True)
class DeliveryListBody:
    __pydantic_config__ = FORBID
    items: Annotated[list[DeliveryBody], Doc(maxItems=DELIVERIES_SHOWN)]


@dataclass(frozen=True, slots=True, kw_only=True)
class WebhookRecordBody(RecordBody):
    """The card as GET /app/audiorecords/{id} answers it (its `quality` report
    included), without `transcript` and `utterances`; for record.deleted (or a record
    deleted before the first attempt) what was known when the event happened."""

    quality: QualityBody | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WebhookPayloadBody:
    """What a receiver gets (`followups.webhooks` writes it; the webhook test
    holds each posted body to this schema)."""

    __pydantic_config__ = FORBID
    id: Annotated[str, Doc(f"The delivery id, also in {DELIVERY_HEADER}: the same on "
                           "every retry", pattern=ID_PATTERN)]
    event: EventField
    created_at: Annotated[Time, Doc("When the event happened")]
    record: WebhookRecordBody


ScopeField = Annotated[str, Doc(enum=["read", "write"])]


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenBody:
    """A personal access token as listed: never the token itself."""

    __pydantic_config__ = FORBID
    id: Id
    name: Annotated[str, Doc(maxLength=NAME_MAX)]
    scope: ScopeField
    created_at: Time
    expires_at: Time | None
    last_used_at: Time | None


@dataclass(frozen=True, slots=True, kw_only=True)
class NewTokenBody(TokenBody):
    token: Annotated[str, Doc("Shown this once; only its hash is kept",
                              pattern="^tx_[A-Za-z0-9_-]{43}$")]


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenAIErrorDetail:
    message: str
    type: Annotated[str, Doc(enum=["invalid_request_error", "server_error"])]
    param: str | None
    code: str | None
    record_id: Annotated[Id | None, Doc("504, or a halt: the record, which stays")] = None
    ABSENT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset({"record_id"})


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenAIErrorBody:
    """Every error of `/v1/`, as OpenAI's API words it (its clients read `type`, `code`)."""

    __pydantic_config__ = FORBID
    error: OpenAIErrorDetail


@dataclass(frozen=True, slots=True, kw_only=True)
class TranscriptionBody:
    __pydantic_config__ = FORBID
    text: str


class TranscriptionSegmentBody(TypedDict):
    """An utterance of the transcript; what the archive does not know is 0 or empty
    (docs/api.md)."""

    id: Count
    seek: Literal[0]
    start: Annotated[float, Doc(minimum=0)]
    end: Annotated[float, Doc(minimum=0)]
    text: str
    tokens: Annotated[list[int], Doc(maxItems=0)]
    temperature: float
    avg_logprob: float
    compression_ratio: float
    no_speech_prob: float


class TranscriptionWordBody(TypedDict):
    word: str
    start: Annotated[float, Doc(minimum=0)]
    end: Annotated[float, Doc(minimum=0)]


class TranscriptionDiarizedSegmentBody(TypedDict):
    """An utterance with its speaker, as OpenAI's gpt-4o-transcribe-diarize answers."""

    type: Literal["transcript.text.segment"]
    id: Annotated[str, Doc("seg_<index>: the utterance's place in the transcript")]
    start: Annotated[float, Doc(minimum=0)]
    end: Annotated[float, Doc(minimum=0)]
    text: str
    speaker: Annotated[str, Doc(
        "The speaker's name as the card gives it; else the label (S1, S2, …); S1 for a "
        "transcript without speakers")]


for _bulk in (TranscriptionSegmentBody, TranscriptionWordBody,
              TranscriptionDiarizedSegmentBody):
    setattr(_bulk, "__pydantic_config__", FORBID)  # noqa: B010 - a TypedDict's body takes no value


@dataclass(frozen=True, slots=True, kw_only=True)
class TranscriptionVerboseBody:
    ABSENT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset({"words"})
    __pydantic_config__ = FORBID
    task: Literal["transcribe"]
    language: Annotated[str, Doc("The language's English name, as OpenAI's API gives it (english)")]
    duration: Annotated[float, Doc(minimum=0)]
    text: str
    segments: list[TranscriptionSegmentBody]
    quality: Annotated[QualityBody | None, Doc(
        "The transcript's quality report (docs/api.md); null: none was made")]
    words: Annotated[list[TranscriptionWordBody] | None, Doc(
        "Asked for with timestamp_granularities[]=word: the recognizer's words as stored "
        "(empty for a record recognized without them, or lines corrected since)")] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TranscriptionDiarizedBody:
    """`response_format=diarized_json`: the transcript by speaker."""

    __pydantic_config__ = FORBID
    task: Literal["transcribe"]
    duration: Annotated[float, Doc(minimum=0)]
    text: str
    segments: list[TranscriptionDiarizedSegmentBody]


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelBody:
    __pydantic_config__ = FORBID
    id: str
    object: Literal["model"]
    created: int
    owned_by: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelListBody:
    __pydantic_config__ = FORBID
    object: Literal["list"]
    data: list[ModelBody]
