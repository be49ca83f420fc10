"""Strict SRT and WebVTT readers, and the subtitle rules a whole export must keep.

`check_subtitle_rules` is the cue-length check the export tests apply to what
the service sends: each cue at most 7 s, at most 2 lines of at most 42 shown
characters (a single word longer than either may stand alone), at least 1 s
where the next cue starts late enough, cues in time order and never
overlapping.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from transcriber.domain.cues import MAX_CUE_MS, MAX_LINE_CHARS, MAX_LINES, MIN_CUE_MS

_SRT_TIME = r"(\d{2}):(\d{2}):(\d{2}),(\d{3})"
_VTT_TIME = r"(\d{2}):(\d{2}):(\d{2})\.(\d{3})"
_VOICE = re.compile(r"^<v [^>]*>")


def _ms(h: str, m: str, s: str, ms: str) -> int:
    return ((int(h) * 60 + int(m)) * 60 + int(s)) * 1000 + int(ms)


def parse_srt(text: str) -> list[tuple[int, int, str]]:
    """A strict SRT reader: numbered blocks, timing line, text, blank line."""
    cues = []
    blocks = [b for b in text.replace("\r\n", "\n").split("\n\n") if b.strip()]
    for number, block in enumerate(blocks, start=1):
        lines = block.strip("\n").split("\n")
        assert lines[0] == str(number), block
        timing = re.fullmatch(f"{_SRT_TIME} --> {_SRT_TIME}", lines[1])
        assert timing, lines[1]
        assert len(lines) > 2
        assert all(line.strip() for line in lines[2:])
        g = timing.groups()
        cues.append((_ms(*g[:4]), _ms(*g[4:]), "\n".join(lines[2:])))
    return cues


def parse_vtt(text: str) -> list[tuple[int, int, str]]:
    """A strict WebVTT reader: the header, NOTE blocks skipped, cues as timing and text."""
    assert text.startswith("WEBVTT\n")
    cues = []
    blocks = [b for b in text.split("\n\n") if b.strip()][1:]
    for block in blocks:
        if block.startswith("NOTE"):
            continue
        lines = block.strip("\n").split("\n")
        timing = re.fullmatch(f"{_VTT_TIME} --> {_VTT_TIME}", lines[0])
        assert timing, lines[0]
        assert all(line.strip() and "-->" not in line for line in lines[1:])
        g = timing.groups()
        cues.append((_ms(*g[:4]), _ms(*g[4:]), "\n".join(lines[1:])))
    return cues


@dataclass(frozen=True)
class ShownCue:
    start_ms: int
    end_ms: int
    lines: tuple[str, ...]
    """As a player shows them: WebVTT's voice span dropped and its escapes read."""


def shown_cues(text: str, fmt: str) -> list[ShownCue]:
    if fmt == "srt":
        return [ShownCue(start, end, tuple(body.split("\n"))) for start, end, body in
                parse_srt(text)]
    assert fmt == "vtt", fmt
    return [ShownCue(start, end, tuple(html.unescape(_VOICE.sub("", line))
                                       for line in body.split("\n")))
            for start, end, body in parse_vtt(text)]


def check_subtitle_rules(text: str, fmt: str) -> list[ShownCue]:
    """Assert the subtitle rules over a whole SRT or WebVTT export; the cues it read."""
    cues = shown_cues(text, fmt)
    for index, cue in enumerate(cues):
        words = " ".join(cue.lines).split()
        assert cue.end_ms > cue.start_ms, cue
        assert cue.end_ms - cue.start_ms <= MAX_CUE_MS or len(words) == 1, cue
        assert len(cue.lines) <= MAX_LINES, cue
        for line in cue.lines:
            assert len(line) <= MAX_LINE_CHARS or " " not in line, cue
        if index + 1 < len(cues):
            following = cues[index + 1]
            assert following.start_ms >= cue.end_ms, (cue, following)
            assert cue.end_ms - cue.start_ms >= min(
                MIN_CUE_MS, following.start_ms - cue.start_ms), (cue, following)
        else:
            assert cue.end_ms - cue.start_ms >= MIN_CUE_MS, cue
    return cues
