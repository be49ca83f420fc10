"""What people type: logins and the free-text fields, checked in one place (pure).

Two rules, both over single characters:

- **Logins** name a person, so two logins that look alike must be one login or
  be refused. A login is NFKC-normalized (fullwidth `ａｌｉｃｅ` is `alice`)
  and refused when it holds anything that draws nothing or only space:
  default-ignorable code points (U+3164 HANGUL FILLER, U+034F COMBINING
  GRAPHEME JOINER, U+FE0F VARIATION SELECTOR-16…), blank-looking symbols
  (U+2800 BRAILLE PATTERN BLANK), white space of any kind (U+00A0 included),
  control, format, surrogate, private-use and unassigned code points. Nothing
  is stripped: `alice\u00a0` is refused, never merged into `alice`.
- **Free text** (titles, briefs, topics, speaker names, transcript
  corrections) is shown to people and exported: control characters (except a
  line break and a tab where the field may hold several lines), line and
  paragraph separators, and format characters are refused, so
  `report\u202egnp.exe` cannot show as `report…exe.png`. Zero-width
  (non-)joiners U+200C/U+200D stay allowed: Persian and Indic words and emoji
  sequences need them, and they reorder nothing.
"""

from __future__ import annotations

import bisect
import unicodedata

from transcriber.core.errors import TranscriberError

LOGIN_MAX = 255

# Default_Ignorable_Code_Point, from DerivedCoreProperties.txt of Unicode
# 14.0.0 (the version of Python 3.11's `unicodedata`; the stdlib has no such
# property). Inclusive ranges, sorted; adjacent lines of the file merged.
DEFAULT_IGNORABLE: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD),    # SOFT HYPHEN
    (0x034F, 0x034F),    # COMBINING GRAPHEME JOINER
    (0x061C, 0x061C),    # ARABIC LETTER MARK
    (0x115F, 0x1160),    # HANGUL CHOSEONG FILLER..HANGUL JUNGSEONG FILLER
    (0x17B4, 0x17B5),    # KHMER VOWEL INHERENT AQ..AA
    (0x180B, 0x180F),    # MONGOLIAN FREE VARIATION SELECTORS, VOWEL SEPARATOR
    (0x200B, 0x200F),    # ZERO WIDTH SPACE..RIGHT-TO-LEFT MARK
    (0x202A, 0x202E),    # LEFT-TO-RIGHT EMBEDDING..RIGHT-TO-LEFT OVERRIDE
    (0x2060, 0x206F),    # WORD JOINER..NOMINAL DIGIT SHAPES (isolates included)
    (0x3164, 0x3164),    # HANGUL FILLER
    (0xFE00, 0xFE0F),    # VARIATION SELECTOR-1..16
    (0xFEFF, 0xFEFF),    # ZERO WIDTH NO-BREAK SPACE
    (0xFFA0, 0xFFA0),    # HALFWIDTH HANGUL FILLER
    (0xFFF0, 0xFFF8),    # reserved
    (0x1BCA0, 0x1BCA3),  # SHORTHAND FORMAT LETTER OVERLAP..UP STEP
    (0x1D173, 0x1D17A),  # MUSICAL SYMBOL BEGIN BEAM..END PHRASE
    (0xE0000, 0xE0FFF),  # TAGS, VARIATION SELECTOR-17..256, reserved
)
_IGNORABLE_STARTS = tuple(start for start, _ in DEFAULT_IGNORABLE)

# Assigned, not default-ignorable, of no invisible category, yet drawn blank
# by every common font: as good as invisible in a login.
BLANK_LOOKING = frozenset({
    0x2800,   # BRAILLE PATTERN BLANK (So)
    0x16FE4,  # KHITAN SMALL SCRIPT FILLER (Mn)
})

# Control, format, surrogate, private use, unassigned; every kind of space.
_LOGIN_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"})

# Free text: control and surrogates, line/paragraph separators, format characters.
_TEXT_REFUSED_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp", "Cf"})
_JOINERS = frozenset({"\u200c", "\u200d"})
_MULTILINE_ALLOWED = frozenset({"\n", "\t"})


class LoginRefused(TranscriberError):
    """A login that is empty, too long, or holds invisible or white-space characters."""


def is_default_ignorable(ch: str) -> bool:
    code = ord(ch)
    at = bisect.bisect_right(_IGNORABLE_STARTS, code) - 1
    return at >= 0 and code <= DEFAULT_IGNORABLE[at][1]


def _invisible_in_login(ch: str) -> bool:
    return (unicodedata.category(ch) in _LOGIN_REFUSED_CATEGORIES
            or is_default_ignorable(ch) or ord(ch) in BLANK_LOOKING)


def canonical_login(raw: str) -> str:
    """The login as stored: NFKC of `raw`; raises `LoginRefused` (its message
    never quotes the login) when it is empty, too long or holds a refused character."""
    login = unicodedata.normalize("NFKC", raw)
    if not login:
        raise LoginRefused("is empty")
    if len(login) > LOGIN_MAX:
        raise LoginRefused(f"is longer than {LOGIN_MAX} characters")
    # The raw form too: a character NFKC folds into an allowed one is still a trick.
    if any(_invisible_in_login(ch) for ch in raw) or any(
            _invisible_in_login(ch) for ch in login):
        raise LoginRefused("holds invisible, white-space, control or format characters")
    return login


def refused_char(ch: str, *, multiline: bool = False) -> bool:
    """Whether a free-text field refuses `ch` (the one rule every field uses)."""
    if ch in _JOINERS or (multiline and ch in _MULTILINE_ALLOWED):
        return False
    return unicodedata.category(ch) in _TEXT_REFUSED_CATEGORIES


def text_problem(value: str, *, multiline: bool = False) -> str | None:
    """Why a free-text value is refused (naming the first bad code point), or None."""
    for ch in value:
        if refused_char(ch, multiline=multiline):
            kind = "a control" if unicodedata.category(ch) in {"Cc", "Cs"} else (
                "a line separator" if unicodedata.category(ch) in {"Zl", "Zp"}
                else "a format (bidi or invisible)")
            return f"holds {kind} character (U+{ord(ch):04X})"
    return None


def without_refused(value: str, *, multiline: bool = False) -> str:
    """`value` with every character a free-text field refuses taken out (for text
    that nobody can be asked to send again, such as a Telegram caption)."""
    return "".join(ch for ch in value if not refused_char(ch, multiline=multiline))
