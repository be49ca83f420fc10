"""OpenAI's speech-to-text API, the pure part: the request's fields and the answers' shapes.

`parse_form` reads the multipart fields OpenAI's clients send beside the
file; `transcription_body` words a finished record the way OpenAI's
`/v1/audio/transcriptions` answers (`json`, `text`, `srt`, `vtt`,
`verbose_json`, `diarized_json`; `txt` is LocalAI's spelling of `text`).
What the archive does not know is filled with neutral values (docs/api.md,
"OpenAI's speech-to-text API", says which): `seek` 0, `tokens` [],
`temperature`, `avg_logprob`, `compression_ratio` and `no_speech_prob` 0.0
(a client that drops segments by these thresholds keeps them all). Words:
the recognizer's words as the structure stores them (version 3); a record
recognized without them, or a line corrected since, has none, and none is
ever invented from the utterances' times. `diarized_json` takes the shape of
OpenAI's gpt-4o-transcribe-diarize: each utterance with its speaker named as
the card names it (the given name, else the label S1, S2, …; S1 for a
transcript recognized without speakers: one voice as far as the archive
knows). `quality` is the transcript's quality report
(`transcriber.domain.quality`), null when none was made.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, get_args

from transcriber.domain import transcripts
from transcriber.domain.languages import language_name
from transcriber.domain.shapes import QualityBody
from transcriber.domain.shapes_integrations import (
    ModelBody,
    TranscriptionBody,
    TranscriptionDiarizedBody,
    TranscriptionDiarizedSegmentBody,
    TranscriptionSegmentBody,
    TranscriptionVerboseBody,
    TranscriptionWordBody,
)
from transcriber.domain.transcript_formats import TranscriptFormat
from transcriber.ports import Utterance
from transcriber.web.errors import ApiError

ResponseFormat = Literal["json", "text", "srt", "vtt", "verbose_json", "diarized_json"]
RESPONSE_FORMATS: tuple[ResponseFormat, ...] = get_args(ResponseFormat)
# Other clients' spellings of a format (LocalAI's CLI and docs say `txt`).
FORMAT_ALIASES: Mapping[str, ResponseFormat] = MappingProxyType({"txt": "text"})
# Who says an utterance the recognizer gave no speaker (the archive's first label).
NO_SPEAKER = "S1"
Granularity = Literal["segment", "word"]
GRANULARITIES: tuple[Granularity, ...] = get_args(Granularity)
# The fields OpenAI's clients send beside `file` (both spellings of the list).
GRANULARITY_FIELDS = ("timestamp_granularities[]", "timestamp_granularities")
TEXT_FORMATS = frozenset({"text", "srt", "vtt"})


@dataclass(frozen=True, slots=True, kw_only=True)
class TranscriptionRequest:
    model: str
    language: str | None
    response_format: ResponseFormat
    granularities: tuple[Granularity, ...]
    # Server-sent events: text deltas as the parts are recognized, then the whole text.
    stream: bool = False


STREAMED_FORMATS = ("json", "text")


def invalid(message: str, param: str, *, close: bool = False) -> ApiError:
    """A 400 naming the field at fault, as OpenAI's clients expect (`param`)."""
    return ApiError(400, "bad_request", message, param=param, close=close)


def _one(fields: Mapping[str, Sequence[str]], name: str) -> str | None:
    values = fields.get(name, ())
    if len(values) > 1:
        raise invalid(f"{name} is given more than once", name, close=True)
    return values[0] if values else None


def parse_form(fields: Mapping[str, Sequence[str]]) -> TranscriptionRequest:
    """Pure: the fields read so far. `model` is accepted whatever it names (the
    configured recognizer answers); `prompt` and `temperature` are ignored; a
    `stream=true` answers server-sent events (`json` or `text` only)."""
    wanted = (_one(fields, "response_format") or "json").strip()
    response_format = FORMAT_ALIASES.get(wanted) or next(
        (f for f in RESPONSE_FORMATS if f == wanted), None)
    if response_format is None:
        raise invalid("response_format must be one of " + ", ".join(RESPONSE_FORMATS),
                      "response_format", close=True)
    granularities: list[Granularity] = []
    for name in GRANULARITY_FIELDS:
        for value in fields.get(name, ()):
            found = next((g for g in GRANULARITIES if g == value.strip()), None)
            if found is None:
                raise invalid("timestamp_granularities must hold segment or word",
                              "timestamp_granularities", close=True)
            granularities.append(found)
    stream = (_one(fields, "stream") or "false").strip().lower() in ("true", "1")
    if stream and response_format not in STREAMED_FORMATS:
        raise invalid("stream=true answers text events: response_format json or text",
                      "stream", close=True)
    language = _one(fields, "language")
    return TranscriptionRequest(
        model=(_one(fields, "model") or "").strip(),
        language=language.strip() or None if language is not None else None,
        response_format=response_format,
        granularities=tuple(dict.fromkeys(granularities)),
        stream=stream,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Transcribed:
    """What an answer is made of: the record's current transcript and a few facts."""

    utterances: Sequence[Utterance]
    speaker_names: Mapping[str, str]
    language: str | None
    """The detected language's code (or the one asked for), None when unknown."""
    duration_ms: int
    quality: Mapping[str, Any] | None = None
    """The quality report's public shape; None when the record has none."""


def plain(utterances: Sequence[Utterance]) -> str:
    """OpenAI's `text`: one paragraph, the utterances joined by spaces."""
    return " ".join(transcripts.one_line(u.text).strip() for u in utterances if u.text.strip())


def segment(index: int, utterance: Utterance) -> TranscriptionSegmentBody:
    return TranscriptionSegmentBody(
        id=index, seek=0, start=utterance.start_ms / 1000, end=utterance.end_ms / 1000,
        text=transcripts.one_line(utterance.text), tokens=[], temperature=0.0,
        avg_logprob=0.0, compression_ratio=0.0, no_speech_prob=0.0)


def verbose(done: Transcribed, granularities: Sequence[Granularity]) -> TranscriptionVerboseBody:
    """`verbose_json`: segments always, `words` when word times are asked for, `quality`."""
    return TranscriptionVerboseBody(
        task="transcribe",
        language=language_name(done.language) if done.language else "",
        duration=done.duration_ms / 1000,
        text=plain(done.utterances),
        # Always: the segments are the archive's own utterances; OpenAI adds them by default.
        segments=[segment(i, u) for i, u in enumerate(done.utterances)],
        words=[TranscriptionWordBody(word=w.text, start=w.start_ms / 1000,
                                     end=w.end_ms / 1000)
               for u in done.utterances for w in u.words] if "word" in granularities else None,
        quality=None if done.quality is None else QualityBody.of(done.quality),
    )


def diarized(done: Transcribed) -> TranscriptionDiarizedBody:
    """`diarized_json`: each utterance with who says it, as the card names them."""
    return TranscriptionDiarizedBody(
        task="transcribe", duration=done.duration_ms / 1000, text=plain(done.utterances),
        segments=[TranscriptionDiarizedSegmentBody(
            type="transcript.text.segment", id=f"seg_{i}", start=u.start_ms / 1000,
            end=u.end_ms / 1000, text=transcripts.one_line(u.text),
            speaker=speaker_name(u.speaker, done.speaker_names))
            for i, u in enumerate(done.utterances)],
    )


def speaker_name(label: str | None, names: Mapping[str, str]) -> str:
    """The card's name for a speaker label; the label when unnamed."""
    if label is None:
        return NO_SPEAKER
    return names.get(label, "").strip() or label


def transcription_body(
    done: Transcribed, request: TranscriptionRequest,
) -> tuple[str, TranscriptionBody | TranscriptionVerboseBody | TranscriptionDiarizedBody
           | str]:
    """The answer's content type and body (a JSON shape, or text as OpenAI sends it)."""
    fmt = request.response_format
    if fmt == "json":
        return "application/json", TranscriptionBody(text=plain(done.utterances))
    if fmt == "verbose_json":
        return "application/json", verbose(done, request.granularities)
    if fmt == "diarized_json":
        return "application/json", diarized(done)
    if fmt == "text":
        return "text/plain", plain(done.utterances) + "\n"
    # As the archive's own exports, speakers named (docs/api.md, "… /transcript").
    export: TranscriptFormat = "srt" if fmt == "srt" else "vtt"
    return "text/plain", transcripts.render(done.utterances, export, done.speaker_names)


def model_entry(model_id: str, *, created: int, owned_by: str) -> ModelBody:
    return ModelBody(id=model_id, object="model", created=created, owned_by=owned_by)
