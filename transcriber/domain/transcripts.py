"""The utterance structure (version 3) and the transcript formats made from it.

The structure is what the pipeline stores (`structures`) and what the card,
the downloads and the CLI render:

    {"version": 3, "utterances": [{"start_ms": 0, "end_ms": 1830, "channel": 0,
                                   "speaker": "S1", "text": "...",
                                   "words": [{"start_ms": 0, "end_ms": 420,
                                              "text": " Hello", "probability": 0.93}]}]}

Version 2 added the optional `speaker` of each utterance, version 3 its
optional `words` (times and the recognizer's confidence, where it gave them:
the quality report and the card's low-confidence marks are made of them);
version-1 and version-2 documents stay readable. The `structures.version` column is the row's
slot (one recognizer structure per record, `STRUCTURE_ROW`), not the
document's version: a record recognized before speakers keeps its row.

Everything here is pure: no I/O, no clock.

The value types the ports speak in: utterances, and the times of speech and words.

Frozen, slotted, keyword-only; no behaviour beyond their fields. The pure
functions over them live with whoever uses them (the pipeline's part planning,
the speaker engine's words).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import orjson

from transcriber.core.errors import TranscriberError
from transcriber.domain.cues import subtitle_cues
from transcriber.domain.text import text_problem
from transcriber.domain.transcript_formats import TranscriptFormat


@dataclass(frozen=True, slots=True, kw_only=True)
class Span:
    """A stretch of time: speech found by a VAD, a window to embed."""

    start_ms: int
    end_ms: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Turn:
    """One stretch of one speaker; `speaker` counts from 0 in order of first appearance."""

    start_ms: int
    end_ms: int
    speaker: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Word:
    start_ms: int
    end_ms: int
    text: str
    """As the recognizer spells it, with its leading space where it has one."""
    probability: float | None = None
    """The recognizer's confidence in the word (0..1) where it tells one, else None."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Utterance:
    start_ms: int
    end_ms: int
    channel: int
    text: str
    speaker: str | None = None
    """`"S1"`, `"S2"`, … when speakers were told apart (structure version 2), else None."""
    words: tuple[Word, ...] = ()
    """The utterance's words with their times and confidence, where the recognizer gave them."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Segment:
    """A recognizer segment with its words."""

    start_ms: int
    end_ms: int
    text: str
    words: tuple[Word, ...] = ()

STRUCTURE_VERSION = 3
READABLE_VERSIONS = frozenset({1, 2, 3})
STRUCTURE_ROW = 1
SPEAKER_RE = re.compile(r"S[1-9][0-9]?")
SPEAKER_NAME_MAX = 64
_ARROW_RE = re.compile(r"-{2,}>")

CONTENT_TYPES: dict[TranscriptFormat, str] = {
    "txt": "text/plain; charset=utf-8",
    "srt": "application/x-subrip; charset=utf-8",
    "vtt": "text/vtt; charset=utf-8",
    "json": "application/json",
    "md": "text/markdown; charset=utf-8",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
}


class BadStructure(TranscriberError):
    """Stored or provided structure JSON is not a valid version 1, 2 or 3 structure."""


def word_dict(w: Word) -> dict[str, Any]:
    return {"start_ms": w.start_ms, "end_ms": w.end_ms, "text": w.text,
            "probability": w.probability}


def _utterance_dict(u: Utterance) -> dict[str, Any]:
    item: dict[str, Any] = {"start_ms": u.start_ms, "end_ms": u.end_ms, "channel": u.channel}
    if u.speaker is not None:
        item["speaker"] = u.speaker
    item["text"] = u.text
    if u.words:
        item["words"] = [word_dict(w) for w in u.words]
    return item


def _word(item: Any) -> Word:
    probability = item.get("probability")
    return Word(start_ms=int(item["start_ms"]), end_ms=int(item["end_ms"]),
                text=str(item["text"]),
                probability=None if probability is None else float(probability))


def structure_dict(utterances: Iterable[Utterance]) -> dict[str, Any]:
    return {"version": STRUCTURE_VERSION,
            "utterances": [_utterance_dict(u) for u in utterances]}


def dump_structure(utterances: Iterable[Utterance]) -> str:
    return orjson.dumps(structure_dict(utterances)).decode()


def load_structure(contents: str | bytes) -> list[Utterance]:
    """Parse stored structure JSON; raises `BadStructure` on anything else."""
    try:
        data = orjson.loads(contents)
    except orjson.JSONDecodeError:
        raise BadStructure("structure is not JSON") from None
    if not isinstance(data, dict) or data.get("version") not in READABLE_VERSIONS:
        raise BadStructure("unsupported structure version")
    items = data.get("utterances")
    if not isinstance(items, list):
        raise BadStructure("utterances must be a list")
    result: list[Utterance] = []
    for item in items:
        try:
            speaker = item.get("speaker")
            if speaker is not None and (
                    not isinstance(speaker, str) or not SPEAKER_RE.fullmatch(speaker)):
                raise ValueError("bad speaker")
            result.append(Utterance(
                start_ms=int(item["start_ms"]), end_ms=int(item["end_ms"]),
                channel=int(item.get("channel", 0)), text=str(item["text"]),
                speaker=speaker, words=tuple(_word(w) for w in item.get("words") or ()),
            ))
        except (AttributeError, KeyError, TypeError, ValueError):
            raise BadStructure("malformed utterance") from None
    return result


def speakers_of(utterances: Sequence[Utterance]) -> list[str]:
    """The speaker labels present, in label order (S1, S2, …, S10)."""
    found = {u.speaker for u in utterances if u.speaker is not None}
    return sorted(found, key=lambda label: int(label[1:]))


def talk_ms(utterances: Sequence[Utterance]) -> dict[str, int]:
    """Milliseconds each speaker talks (the sum of their utterances), in label order."""
    totals = dict.fromkeys(speakers_of(utterances), 0)
    for u in utterances:
        if u.speaker is not None:
            totals[u.speaker] += max(0, u.end_ms - u.start_ms)
    return totals


def card_speakers(utterances: Sequence[Utterance], names: Mapping[str, str], *,
                  also: Iterable[str] = ()) -> dict[str, dict[str, Any]]:
    """The card's `speakers`: each label with its given name ("" when none) and talk time.

    `also`: labels the record has without a line now (the recognizer's, all of
    whose lines were moved away), kept with 0 ms so a line can move back."""
    totals = {**dict.fromkeys(also, 0), **talk_ms(utterances)} if utterances else {}
    ordered = sorted(totals, key=lambda label: int(label[1:]))
    return {label: {"name": names.get(label, ""), "talk_ms": totals[label]}
            for label in ordered}


# How an export marks a name the service suggested and nobody confirmed.
SUGGESTED_MARK = " (?)"


def with_suggested_names(names: Mapping[str, str],
                         suggested: Mapping[str, str]) -> dict[str, str]:
    """Pure: the names an export uses with `speakers.apply_suggestions`: each unnamed
    speaker by its suggested name, marked as such ("Anna (?)")."""
    merged = {label: name for label, name in names.items() if name.strip()}
    for label, name in suggested.items():
        if label not in merged:
            merged[label] = f"{name}{SUGGESTED_MARK}"
    return merged


def voice_of(u: Utterance, names: Mapping[str, str], several: bool) -> str | None:
    """Who an exported line is said by: the given name; else the label when the
    record has several speakers; else nobody (a transcript without speakers)."""
    if u.speaker is None:
        return None
    name = names.get(u.speaker, "").strip()
    return name or (u.speaker if several else None)


def has_several(utterances: Sequence[Utterance]) -> bool:
    return len(speakers_of(utterances)) > 1


def one_line(text: str) -> str:
    """An utterance's text as one line of an export: every run of white space,
    line breaks included, becomes one space. A correction typed over several
    lines can then never fake a line of its own (`Boss: I approve`) nor end a
    cue with a blank line."""
    return " ".join(text.split())


def plain_text(utterances: Sequence[Utterance]) -> str:
    """The words alone: one utterance per line, in time order (the stored and
    indexed transcript text, which speaker labels would only pollute)."""
    return "\n".join(one_line(u.text) for u in utterances if u.text.strip())


def named_text(utterances: Sequence[Utterance],
               names: Mapping[str, str] | None = None) -> str:
    """The TXT transcript: one utterance per line, `Name: text` when the line
    has a speaker worth naming (see `voice_of`)."""
    given = names or {}
    several = has_several(utterances)
    lines = []
    for u in utterances:
        text = one_line(u.text)
        if not text:
            continue
        voice = voice_of(u, given, several)
        lines.append(f"{voice}: {text}" if voice else text)
    return "\n".join(lines)


def _timestamp(ms: int, sep: str) -> str:
    ms = max(ms, 0)
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{seconds:02d}{sep}{millis:03d}"


def _turn_leads(utterances: Sequence[Utterance], names: Mapping[str, str]) -> list[str]:
    """Each utterance's voice where a turn starts (its speaker differs from the
    previous spoken line's), "" elsewhere: a subtitle names who speaks once, on
    the first cue of the turn, and each later cue has the lines to itself."""
    several = has_several(utterances)
    leads, previous = [], None
    for u in utterances:
        if not u.text.strip():
            leads.append("")
            continue
        voice = voice_of(u, names, several)
        leads.append(voice if voice and voice != previous else "")
        previous = voice
    return leads


def to_srt(utterances: Sequence[Utterance], names: Mapping[str, str] | None = None) -> str:
    """SubRip cues cut by the subtitle rules (`cues.subtitle_cues`), `Name: ` opening
    the first cue of each speaker's turn. No title: SRT has no comments, and a
    title cue would be shown as something said."""
    leads = [f"{_srt_text(voice)}:" if voice else ""
             for voice in _turn_leads(utterances, names or {})]
    blocks = []
    for number, cue in enumerate(subtitle_cues(utterances, leads), start=1):
        text = "\n".join(_srt_text(line) for line in cue.lines)
        blocks.append(f"{number}\n{_timestamp(cue.start_ms, ',')} --> "
                      f"{_timestamp(cue.end_ms, ',')}\n{text}\n")
    return "\n".join(blocks)


def _srt_text(text: str) -> str:
    # SRT has no escapes: "-->" (however many dashes) would read as a timing line.
    return _ARROW_RE.sub("->", one_line(text))


def vtt_escape(text: str) -> str:
    """WebVTT cue text: `&`, `<` and `>` as character references (WebVTT,
    "cue text"), so text can open no tag (`<v Boss>`, `<c>`…) and, with `>`
    escaped, never holds the `-->` that ends a cue's text."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def to_vtt(utterances: Sequence[Utterance], names: Mapping[str, str] | None = None, *,
           title: str = "") -> str:
    """WebVTT cues cut by the subtitle rules (`cues.subtitle_cues`); a title is a NOTE
    block after the header (a comment: no player shows it, and a NOTE may not hold
    "-->", which the title cannot then hold either).

    Every cue of a turn carries its voice span (`<v Anna>`): it is markup, not shown
    text (browsers do not draw it), and a cue without it would say nobody's words."""
    given = names or {}
    several = has_several(utterances)
    blocks = ["WEBVTT\n"]
    if title.strip():
        blocks.append(f"NOTE {_ARROW_RE.sub('->', one_line(title))}\n")
    for cue in subtitle_cues(utterances):
        voice = voice_of(utterances[cue.utterance], given, several)
        # The voice span's annotation runs to the first ">": escaped like cue text.
        tag = f"<v {vtt_escape(one_line(voice))}>" if voice else ""
        text = "\n".join(vtt_escape(line) for line in cue.lines)
        blocks.append(f"{_timestamp(cue.start_ms, '.')} --> {_timestamp(cue.end_ms, '.')}\n"
                      f"{tag}{text}\n")
    return "\n".join(blocks)


def to_json(utterances: Sequence[Utterance], names: Mapping[str, str] | None = None, *,
           title: str = "", quality: Mapping[str, Any] | None = None) -> str:
    """The structure (utterances whole, with their words), each utterance with a speaker
    also carrying `speaker_name` ("" if none), the record's `title` ("" when it has
    none) and its `quality` report (null when it has none: `transcriber.domain.quality`)."""
    given = names or {}
    data = {"title": one_line(title), **structure_dict(utterances),
            "quality": None if quality is None else dict(quality)}
    for item in data["utterances"]:
        if "speaker" in item:
            item["speaker_name"] = given.get(item["speaker"], "")
    return orjson.dumps(data).decode()


def render(utterances: Sequence[Utterance], fmt: TranscriptFormat,
           names: Mapping[str, str] | None = None, *, title: str = "",
           quality: Mapping[str, Any] | None = None) -> str:
    """The transcript in one of `FORMATS`, speakers named by `names` (`{"S1": "Anna"}`),
    under the record's `title` when it has one: TXT's first line (a blank line after
    it), a WebVTT NOTE, JSON's `title`; SRT, which has no place for one, leaves it out."""
    if fmt == "txt":
        text = named_text(utterances, names)
        head = one_line(title)
        body = f"{head}\n\n{text}" if head else text
        return f"{body}\n" if body else ""
    if fmt == "srt":
        return to_srt(utterances, names)
    if fmt == "vtt":
        return to_vtt(utterances, names, title=title)
    if fmt == "json":
        return to_json(utterances, names, title=title, quality=quality)
    # md and docx (the record's facts beside the words): `documents.render_bytes`.
    raise ValueError(f"unknown transcript format {fmt!r}")


def reply_text(utterances: Sequence[Utterance],
               names: Mapping[str, str] | None = None) -> str:
    """The transcript as the bot sends it back: the one place its text is made.

    `Name: text` lines when the recording has several speakers (the label,
    S1, S2, … where no name was given); the plain transcript otherwise."""
    if not has_several(utterances):
        return plain_text(utterances)
    return named_text(utterances, names)


class BadCorrection(TranscriberError):
    """A correction names an utterance that does not exist, or a field that cannot change."""


# The fields of an utterance a person may correct, with their limit; the
# speaker must also be one of the record's (`apply_corrections`).
CORRECTABLE_FIELDS: dict[str, int] = {"text": 5000, "speaker": 3}


def apply_corrections(
    utterances: Sequence[Utterance], corrections: Sequence[Mapping[str, object]],
    *, speakers: Iterable[str] = (),
) -> list[Utterance]:
    """The utterances with each correction `{"index": i, <field>: value}` applied.

    Times and channels never change: a correction is of what was said (and
    by whom), and the exports keep their cues. `speakers` are the record's
    labels a line may move to. Raises `BadCorrection` on an unknown index,
    field or speaker (pure: the caller turns it into a 400).
    """
    known = set(speakers)
    result = list(utterances)
    for correction in corrections:
        index = correction.get("index")
        if not isinstance(index, int) or isinstance(index, bool) or not (
                0 <= index < len(result)):
            raise BadCorrection(f"no utterance {index!r}")
        changes = {key: value for key, value in correction.items() if key != "index"}
        unknown = sorted(set(changes) - set(CORRECTABLE_FIELDS))
        if unknown:
            raise BadCorrection(f"cannot correct {', '.join(unknown)}")
        for key, value in changes.items():
            if not isinstance(value, str) or len(value) > CORRECTABLE_FIELDS[key]:
                raise BadCorrection(
                    f"{key} must be a string of at most {CORRECTABLE_FIELDS[key]} characters")
            if key == "speaker" and value not in known:
                raise BadCorrection(f"{value!r} is not a speaker of this record")
            problem = text_problem(value, multiline=True)
            if problem is not None:
                raise BadCorrection(f"the {key} of utterance {index} {problem}")
        corrected = replace(result[index], **changes)  # type: ignore[arg-type]
        if corrected.text != result[index].text:
            # The recognizer's words (and their confidence) were of the old text.
            corrected = replace(corrected, words=())
        result[index] = corrected
    return result
