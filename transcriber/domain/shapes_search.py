"""What search answers: a record found with the utterances holding the query's words
(`GET /app/audiorecords?q=`, `/app/audiorecords/{id}/matches`; the rules of
`domain.shapes` hold here too; `openapi_schemas` generates their component schemas)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Annotated, ClassVar, Literal

from typing_extensions import TypedDict

from transcriber.domain.shapes import FORBID, SPEAKER, Count, Doc, RecordBody


class MatchBody(TypedDict):
    """An utterance holding a query's words (`web.matches`, built in the match pool's
    worker processes)."""

    utterance_index: Annotated[int, Doc("The card's `utterances[].index`", minimum=0)]
    start_ms: int
    end_ms: int
    speaker: Annotated[str, Doc(pattern=SPEAKER)] | None
    snippet: Annotated[str, Doc("The utterance's text; a long one cut around its first "
                                "mark, with … at a cut end", maxLength=240)]
    marks: Annotated[list[Annotated[list[Count], Doc(minItems=2, maxItems=2)]], Doc(
        "The matched words of the snippet: [start, end) in Unicode code points, in order")]


setattr(MatchBody, "__pydantic_config__", FORBID)  # noqa: B010 - a TypedDict's body takes no value


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchResultBody(RecordBody):
    """A record found by `q`, with where its transcript holds the query's words."""

    matches: Annotated[list[MatchBody], Doc(
        "Up to 3 utterances holding the query's words (those holding the most terms), in "
        "time order; empty when only the title, brief, file name or speaker names matched",
        maxItems=3)]
    ABSENT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset({"matches_partial"})

    matches_partial: Annotated[Literal[True] | None, Doc(
        "Present when the matching's CPU budget ran out before this record's transcript "
        "was read whole")] = None

    @classmethod
    def of(cls, record: RecordBody, *, matches: list[MatchBody],
           partial: bool) -> SearchResultBody:
        return cls(**{f.name: getattr(record, f.name) for f in fields(RecordBody)},
                   matches=matches, matches_partial=True if partial else None)


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchListBody:
    __pydantic_config__ = FORBID
    matches: list[MatchBody]
    partial: Annotated[bool, Doc("The matching's CPU budget ran out before the transcript "
                                 "was read whole")]
