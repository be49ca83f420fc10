"""What the command-line client prints of anything it received: never a terminal command.

A server's record id, halt reason, error message or transcript is printed
on a terminal; an ESC in it would be a command to the terminal, not text
(set the window title, clear the screen, write the clipboard with OSC 52,
hide text by moving the cursor). Every character a free-text field of the
service refuses (`text.refused_char`: controls, C1 controls such as
CSI U+009B, bidi and invisible format characters, line separators) is shown
as its escape (`\\x1b`, `\\u202e`) instead: visible, inert, and telling that
something was there. One-line values are cut to `LINE_MAX` characters too.
"""

from __future__ import annotations

import re
import sys
from functools import cache
from typing import TextIO

from transcriber.cli.texts import say
from transcriber.domain.text import refused_char

# A one-line value (an id, a reason, an error message) longer than this is cut:
# a server's 10 MB error message is not a line.
LINE_MAX = 300


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown(value: object, *, limit: int = LINE_MAX) -> str:
    """`value` as text safe to print on one line of a terminal."""
    text = str(value)
    cut = len(text) > limit
    if cut:
        text = text[:limit]
    safe = "".join(_escape(ch) if refused_char(ch) else ch for ch in text)
    return safe + "…" if cut else safe


@cache
def _refused_pattern(*, multiline: bool) -> re.Pattern[str]:
    """Every refused code point as one character class (built once, on first use: a
    64 MiB transcript is then one regex pass, not 64 million category look-ups)."""
    ranges: list[str] = []
    start = previous = -2
    for code in range(sys.maxunicode + 1):
        if not refused_char(chr(code), multiline=multiline):
            continue
        if code != previous + 1:
            if start >= 0:
                ranges.append(_range(start, previous))
            start = code
        previous = code
    ranges.append(_range(start, previous))
    return re.compile("[" + "".join(ranges) + "]")


def _range(first: int, last: int) -> str:
    return re.escape(chr(first)) if first == last else (
        f"{re.escape(chr(first))}-{re.escape(chr(last))}")


def shown_lines(text: str) -> str:
    """A received document (a transcript) safe to print or write: its line feeds and
    tabs kept, every other refused character escaped; no length limit (the reader
    bounds the size)."""
    return _refused_pattern(multiline=True).sub(lambda found: _escape(found.group()), text)


def tell(err: TextIO, key: str, **values: object) -> None:
    """One line of the catalogue on `err`; every value passes through `shown` (a
    server's words, ids, names: none may be a terminal command)."""
    print(say(key, **{name: shown(value) for name, value in values.items()}), file=err)
