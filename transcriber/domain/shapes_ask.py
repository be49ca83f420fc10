"""What `POST /app/ask` answers (the rules of `domain.shapes` hold here too;
`openapi_schemas` generates their component schemas beside the archive's)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from transcriber.domain.ask_passages import Line, Passage
from transcriber.domain.shapes import FORBID, Count, Doc, Id, Time

Speaker = Annotated[str | None, Doc("The speaker's name where one was given, else the "
                                    "label (S1, …), else null")]


@dataclass(frozen=True, slots=True, kw_only=True)
class AskLineBody:
    __pydantic_config__ = FORBID
    utterance_index: Annotated[int, Doc("The card's `utterances[].index`", minimum=0)]
    start_ms: Count
    end_ms: Count
    speaker: Speaker
    text: str

    @classmethod
    def of(cls, line: Line) -> AskLineBody:
        return cls(utterance_index=line.index, start_ms=line.start_ms, end_ms=line.end_ms,
                   speaker=line.speaker, text=line.text)


@dataclass(frozen=True, slots=True, kw_only=True)
class PassageBody:
    """A window of a record's utterances; `best` holds the question's words best and
    `mark` is its best sentence."""

    __pydantic_config__ = FORBID
    number: Annotated[int, Doc("What the answer cites as [number]", minimum=1)]
    record_id: Id
    title: str
    created_at: Time
    lines: list[AskLineBody]
    best: Annotated[int, Doc("The `utterance_index` of the line that holds the question's "
                             "words best", minimum=0)]
    mark: Annotated[list[Count], Doc("The best sentence of the best line: [start, end) "
                                     "in Unicode code points of its text",
                                     minItems=2, maxItems=2)]

    @classmethod
    def of(cls, passage: Passage, number: int) -> PassageBody:
        return cls(number=number, record_id=passage.record_id, title=passage.title,
                   created_at=passage.created_at,
                   lines=[AskLineBody.of(line) for line in passage.lines],
                   best=passage.best.index, mark=list(passage.sentence))


@dataclass(frozen=True, slots=True, kw_only=True)
class CitationBody:
    """A verbatim quote of a record's transcript, and where it was said."""

    __pydantic_config__ = FORBID
    record_id: Id
    utterance_index: Annotated[int, Doc(minimum=0)]
    start_ms: Count
    end_ms: Count
    speaker: Speaker
    quote: Annotated[str, Doc("Verbatim: a part of that utterance's text")]
    passage: Annotated[int, Doc("The passage's `number`", minimum=1)]


@dataclass(frozen=True, slots=True, kw_only=True)
class AskBody:
    __pydantic_config__ = FORBID
    answer: Annotated[str | None, Doc(
        "The language model's answer as plain text (never HTML), citing passages as [n]; "
        "null offline (`ask.provider` offline: the passages are the answer)")]
    passages: list[PassageBody]
    citations: list[CitationBody]
    conversation: Annotated[Id | None, Doc("Send it back with a follow-up question; null "
                                           "when nothing was stored")]
    unchecked: Annotated[Count, Doc(
        "Citations of the model's answer dropped after generation (a [n] that is not a "
        "passage, a quote that is not in the transcript); the answer says so when not 0")]
    language: Annotated[str, Doc(enum=["en", "ru"])]


@dataclass(frozen=True, slots=True, kw_only=True)
class ConversationTurnBody:
    __pydantic_config__ = FORBID
    question: str
    answer: str | None
    citations: list[CitationBody]
    asked_at: Time


@dataclass(frozen=True, slots=True, kw_only=True)
class ConversationBody:
    __pydantic_config__ = FORBID
    id: Id
    created_at: Time
    turns: list[ConversationTurnBody]


@dataclass(frozen=True, slots=True, kw_only=True)
class ConversationSummaryBody:
    """A conversation in its asker's list (`GET /app/ask/conversations`)."""

    __pydantic_config__ = FORBID
    id: Id
    created_at: Time
    updated_at: Annotated[str, Doc("When its last question was asked (the list's order)",
                                   pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")]
    first_question: Annotated[str | None, Doc("What was asked first (the asker's own "
                                              "words); null for a conversation with no turn")]
    turns: Count
