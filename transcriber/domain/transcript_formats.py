"""The formats a transcript is rendered in: a module of its own, so the command-line
parser names them (`--format`) without importing the renderers (`transcripts`,
`cues`) at every start (tests/unit/test_light_imports.py)."""

from __future__ import annotations

from typing import Literal, get_args

TranscriptFormat = Literal["txt", "srt", "vtt", "json", "md", "docx"]
FORMATS: tuple[TranscriptFormat, ...] = get_args(TranscriptFormat)
BINARY_FORMATS: frozenset[TranscriptFormat] = frozenset({"docx"})
"""Formats that are not text: never printed to a terminal, only written to a file."""
