"""The web app's strings: one catalogue per language, the same keys in each, and
every key the code uses present in both; no sentence written inline in the code."""

from __future__ import annotations

import re
from pathlib import Path

from transcriber.domain.stages import HaltReason, Stage, step_names
from transcriber.domain.transcript_formats import FORMATS
from transcriber.providers.recognizers import WHISPER_LANGUAGES
from transcriber.web.spa import ASSETS_DIR

CATALOGUES = ("messages-en.js", "messages-ru.js")
_KEY_RE = re.compile(r'^\s*"([a-z_]+\.[a-z_]+)":', re.M)
_USED_RE = re.compile(r'\bt\(\s*"([^"]+)"')
_PAGE_RE = re.compile(r'data-i18n="([^"]+)"')
_STRING_RE = re.compile(r'"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\]|\\.)*)`')
_COMMENT_RE = re.compile(r"^\s*//.*$|/\*.*?\*/", re.M | re.S)
# Prose: a capitalised word followed by more words, or an ellipsis.
_PROSE_RE = re.compile(r"^[A-Z][a-z]+(?: [A-Za-z]+)+|…")


def _keys(name: str) -> set[str]:
    return set(_KEY_RE.findall((ASSETS_DIR / name).read_text()))


def _code() -> dict[str, str]:
    return {path.name: path.read_text() for path in sorted(ASSETS_DIR.glob("*.js"))
            if path.name not in CATALOGUES}


def dynamic_keys() -> set[str]:
    """Keys built at run time from the API's own vocabularies."""
    spoken = re.search(r"SPOKEN = \[([^\]]*)\]", (ASSETS_DIR / "upload.js").read_text())
    assert spoken is not None
    codes = re.findall(r'"(\w+)"', spoken.group(1))
    assert set(codes) - {"auto"} <= set(WHISPER_LANGUAGES)
    return ({f"stage.{s.value}" for s in Stage} | {f"halt.{r.value}" for r in HaltReason}
            | {f"step.{s}" for s in (*step_names(), "resume", "retranscribe",
                                                   "link_created", "link_revoked",
                                                   "link_opened")}
            | {f"outcome.{o}" for o in ("done", "failed", "halted", "resumed")}
            | {f"format.{f}" for f in FORMATS} | {f"spoken.{c}" for c in codes}
            | {f"stage_note.{n}" for n in ("achieved", "current", "halted", "pending")}
            | {f"work.{s.value}" for s in Stage if s is not Stage.DONE})


def used_keys() -> set[str]:
    used = {key for text in _code().values()
            for key in _USED_RE.findall(_COMMENT_RE.sub("", text))}
    used |= set(_PAGE_RE.findall((ASSETS_DIR / "index.html").read_text()))
    return used | dynamic_keys()


def test_both_catalogues_have_the_same_keys() -> None:
    english, russian = (_keys(name) for name in CATALOGUES)
    assert english, "no keys read from the English catalogue"
    assert english - russian == set(), "missing from messages-ru.js"
    assert russian - english == set(), "missing from messages-en.js"


def test_every_key_the_app_uses_is_in_both_catalogues() -> None:
    for name in CATALOGUES:
        assert used_keys() - _keys(name) == set(), f"missing from {name}"


def test_no_prose_is_written_inline() -> None:
    found = []
    for name, text in _code().items():
        for match in _STRING_RE.finditer(_COMMENT_RE.sub("", text)):
            literal = match.group(1) if match.group(1) is not None else match.group(2)
            if _PROSE_RE.search(literal):
                found.append(f"{name}: {literal!r}")
    assert found == []


def test_the_checks_catch_a_missing_string(tmp_path: Path) -> None:
    """A key used in code but absent from a catalogue is caught by the same reading."""
    code = 'replace(status, t("list.brand_new_key"));\nh("p", {}, "Plain words here");'
    assert set(_USED_RE.findall(code)) - _keys("messages-en.js") == {"list.brand_new_key"}
    assert any(_PROSE_RE.search(m.group(1) or "") for m in _STRING_RE.finditer(code))
