"""Every reference a document makes exists, so the docs cannot drift from the code.

Read: README.md, CHANGELOG.md, docs/*.md and openspec/specs/*/spec.md. Fenced
code blocks are examples (trees, shell sessions, TOML) and are skipped; every
inline code span is cut into words, and a word is checked when it is one of:

- a repository path: it starts with a top folder of the repository
  (`transcriber/`, `tests/`, `docs/`, …) or with a sub-package of `transcriber`
  (`providers/whisper.py`, read under `transcriber/`); it must exist (`*` is a
  glob that must match);
- a bare file name `name.py`, `name.js` or `name.css`: a file of that name
  lies under `transcriber/` or `tests/`;
- a dotted name rooted at `transcriber.` or `tests.`: its longest importable
  module prefix, then the rest as attributes (`(…)` of a call dropped);
- `module.name`, where `module` is the last part of a module under
  `transcriber/` (`whisper.WhisperRecognizer`, `records.ALL_FILE_NAMES`): one
  module of that name has the attributes;
- `` `path.py`'s `Name` ``: the module at that path has the attribute;
- a setting `section.key` (a section of `transcriber.settings.Settings`): the
  key is a field of that section (a word that is neither a setting nor a
  module's attribute is reported as both);
- an environment variable `TRANSCRIBER_…`: a setting's variable, one that is
  not a setting (`TRANSCRIBER_CONFIG`, the command-line client's
  `TRANSCRIBER_SERVER_URL` and `TRANSCRIBER_TOKEN`), or a `TRANSCRIBER_BENCH_…`
  knob read under tests/bench;
- a metric `transcriber_…` (labels dropped): registered in
  `transcriber/core/observability.py`.

Besides the code spans, every relative Markdown link must reach a file (and its
`#anchor` a heading there), and a doc named with a quoted section
(`operations.md "Alerts"`) must have that heading.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import re
import tomllib
import typing
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from prometheus_client.metrics import MetricWrapperBase

from transcriber.core import observability
from transcriber.settings import NON_SETTING_ENV, Settings, setting_keys

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "transcriber"
TOP_FOLDERS = ("transcriber", "tests", "docs", "migrations", "deploy", ".ci", "openspec")
# Endings of file and host names, not of dotted Python names: `model.bin` is not
# `settings/model.py`'s `bin`, nor `api.telegram.org` a name in `web/api.py`.
NOT_PYTHON_ENDINGS = frozenset({
    "py", "md", "sql", "js", "css", "html", "svg", "json", "toml", "yml", "yaml",
    "txt", "bin", "onnx", "ogg", "mp3", "wav", "sqlite3", "lock", "srt", "vtt", "exe",
    "png", "part", "org", "net", "com",
})
# A bare file name with one of these endings names a module or a web asset.
BARE_FILE_ENDINGS = (".py", ".js", ".css")
# Words shaped like references that are not: each with the reason.
NOT_REFERENCES = frozenset({
    "migrations/NNNN_name.sql",  # the naming pattern of a migration, not a file
    "storage.uploader",  # a Yandex Cloud role (docs/recognition.md), not a setting
    "TRANSCRIBER_PIPELINE_WORKER",  # the misspelling in docs/settings.md's example error
    "lib.js",  # the module the webapp spec's asset-hashing scenario imagines
})
# Words in docstrings shaped like a module's name that are not: each with the reason.
NOT_CITATIONS = frozenset({
    "name.py", "name.js", "name.css",  # this module's own description of a bare name
    "model.align",  # faster-whisper's model object, not `settings/model.py`
    "progress.eta_seconds",  # a field of the card's JSON `progress` object
    "files.original.size_bytes",  # a path into the card's JSON
})

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
_SPAN = re.compile(r"`([^`\n]+(?:\n[^`\n]+)*?)`")
_POSSESSIVE = re.compile(r"`([\w./-]+\.py)`'s `([A-Za-z_][\w.]*)`")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_QUOTED_SECTION = re.compile(r"([\w/.-]+\.md)`?,? \"([^\"]+)\"")
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_*]\w*)+")
_ENV = re.compile(r"TRANSCRIBER_[A-Z0-9_]*[A-Z0-9]")
_METRIC = re.compile(r"transcriber_[a-z0-9_]+")


def _documents() -> list[Path]:
    found = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md")),
             *sorted((ROOT / "openspec" / "specs").glob("*/spec.md"))]
    return [path for path in found if path.exists()]


def _without_fences(text: str) -> str:
    """The text with each fenced block blanked out, its line breaks kept."""
    return _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def _spans(text: str) -> Iterator[tuple[int, str]]:
    """(line, content) of every inline code span outside fenced blocks."""
    for match in _SPAN.finditer(text):
        yield text.count("\n", 0, match.start()) + 1, match.group(1)


@cache
def _module_files() -> dict[str, list[str]]:
    """Last part of a module's name -> the dotted names of the modules ending so."""
    modules: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules.setdefault(parts[-1], []).append(".".join(parts))
    return modules


@cache
def _subpackages() -> frozenset[str]:
    return frozenset(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())


@cache
def _settings() -> dict[str, frozenset[str]]:
    hints = typing.get_type_hints(Settings)
    return {section.name: frozenset(f.name for f in dataclasses.fields(hints[section.name]))
            for section in dataclasses.fields(Settings)}


@cache
def _env_names() -> frozenset[str]:
    return frozenset({*NON_SETTING_ENV, *setting_keys().values()})


@cache
def _bench_source() -> str:
    return "\n".join(p.read_text() for p in sorted((ROOT / "tests" / "bench").rglob("*.py")))


@cache
def _metric_names() -> frozenset[str]:
    """Every name a registered metric is scraped by (a counter's `_total`, …)."""
    suffixes = {"counter": ("", "_total"), "histogram": ("", "_bucket", "_count", "_sum")}
    names: set[str] = set()
    for value in vars(observability).values():
        if isinstance(value, MetricWrapperBase):
            for family in value.describe():
                names.update(family.name + s for s in suffixes.get(family.type, ("",)))
    return frozenset(names)


@cache
def _mapped_packages() -> dict[str, str]:
    """Packages of the wheel that pyproject.toml maps from another folder."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    mapped: dict[str, str] = project["tool"]["setuptools"].get("package-dir", {})
    return mapped


def _resolves(dotted: str) -> bool:
    """The longest importable module prefix of `dotted`, then its attributes."""
    if dotted in _mapped_packages():
        return (ROOT / _mapped_packages()[dotted]).is_dir()
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        name = ".".join(parts[:cut])
        try:
            value: object = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and name.startswith(exc.name):
                continue  # this prefix is no module: try a shorter one
            raise
        found_at = getattr(value, "__file__", None)
        if found_at and name.startswith(("transcriber.", "tests.")) and not Path(
                found_at).resolve().is_relative_to(ROOT):
            # An editable install of another checkout maps a module this tree no
            # longer has: for this tree it is gone.
            return False
        for attribute in parts[cut:]:
            if attribute == "*":
                return True
            if not hasattr(value, attribute):
                return False
            value = getattr(value, attribute)
        return True
    return False


def _path_problem(word: str) -> str | None:
    first = word.split("/", 1)[0]
    if first in TOP_FOLDERS:
        target = word
    elif first in _subpackages() and "/" in word:
        target = f"transcriber/{word}"
    elif "/" not in word and word.endswith(BARE_FILE_ENDINGS):
        if (ROOT / word).is_file() or any(
                p.is_file() for top in ("transcriber", "tests") for p in (ROOT / top).rglob(word)):
            return None
        return f"no file {word} at the top, under transcriber/ or tests/"
    else:
        return None
    if "*" in target:
        return None if any(ROOT.glob(target.rstrip("/"))) else f"nothing matches {target}"
    return None if (ROOT / target).exists() else f"no path {target}"


def _dotted_problem(word: str) -> str | None:
    word = re.sub(r"\(.*$", "", word)
    if not _DOTTED.fullmatch(word) or word.rsplit(".", 1)[-1] in NOT_PYTHON_ENDINGS:
        return None
    first, *rest = word.split(".")
    if first in ("transcriber", "tests"):
        return None if _resolves(word) else f"no Python name {word}"
    settings = _settings()
    if first in settings and len(rest) == 1 and (rest[0] in settings[first] or rest[0] == "*"):
        return None
    modules = _module_files().get(first, [])
    if any(_resolves(".".join([module, *rest])) for module in modules):
        return None
    if first in settings:
        return f"no setting {word}" + (f" and no such name in {', '.join(modules)}"
                                       if modules else "")
    if modules:
        return f"no name {'.'.join(rest)} in {', '.join(modules)}"
    if first in _tables():
        return None  # a column of a table (`audio_records.owner_id`)
    if "_" in first and importlib.util.find_spec(first) is None:
        # A compound snake_case name before the dot is a module's (`speaker_words.Span`),
        # never prose: one that is neither ours nor importable was moved or renamed.
        return f"no module {first}"
    return None


@cache
def _tables() -> frozenset[str]:
    """The tables the migrations create."""
    found: set[str] = set()
    for migration in (ROOT / "migrations").glob("*.sql"):
        found.update(re.findall(r"CREATE (?:VIRTUAL )?TABLE (?:IF NOT EXISTS )?(\w+)",
                                migration.read_text(encoding="utf-8"), flags=re.I))
    return frozenset(found)


def _word_problem(word: str) -> str | None:
    word = word.strip("\"'(),;:[]").removesuffix("…")
    if not word or word in NOT_REFERENCES or "<" in word or "…" in word:
        return None
    if env := _ENV.fullmatch(word.split("=", 1)[0]):
        name = env.group(0)
        known = name in _env_names() or (name.startswith("TRANSCRIBER_BENCH_")
                                         and name in _bench_source())
        return None if known else f"no setting variable {name}"
    if metric := _METRIC.match(word):
        name = metric.group(0)
        if word[len(name):len(name) + 1] in ("", "{"):
            return None if name in _metric_names() else f"no metric {name}"
    if "/" in word:
        return _path_problem(word)
    if word.endswith(BARE_FILE_ENDINGS):
        return _path_problem(word)
    return _dotted_problem(word)


def _module_of(path_word: str) -> list[str]:
    """The dotted module names a `….py` word may stand for."""
    if "/" not in path_word:
        return _module_files().get(path_word.removesuffix(".py"), [])
    top = path_word.split("/", 1)[0]
    relative = path_word if top in TOP_FOLDERS else f"transcriber/{path_word}"
    return [".".join(Path(relative).with_suffix("").parts)]


def _headings(path: Path) -> set[str]:
    text = _without_fences(path.read_text())
    return {re.sub(r"[*`]", "", m.group(1)).strip()
            for m in re.finditer(r"^#+ (.+)$", text, re.M)}


def _slug(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def _link_problem(document: Path, target: str) -> str | None:
    if re.match(r"[a-z]+:", target):
        return None  # http:, https:, mailto:
    file_part, _, anchor = target.partition("#")
    path = (document.parent / file_part).resolve() if file_part else document
    if not path.exists():
        return f"link to a missing file {file_part}"
    if anchor and path.suffix == ".md" and anchor not in {_slug(h) for h in _headings(path)}:
        return f"link to a missing heading #{anchor} in {path.relative_to(ROOT)}"
    return None


def _section_problem(document: Path, doc_word: str, section: str) -> str | None:
    name = Path(doc_word).name
    path = ROOT / "docs" / name if name != "README.md" else ROOT / name
    if not path.exists():
        return None  # the path check reports it
    return None if section in _headings(path) else f"no section \"{section}\" in {name}"


def _problems(document: Path) -> Iterator[tuple[int, str]]:
    text = _without_fences(document.read_text())
    for line, span in _spans(text):
        for word in span.split():
            if problem := _word_problem(word):
                yield line, f"`{span.strip()}`: {problem}"
    for match in _POSSESSIVE.finditer(text):
        path_word, name = match.groups()
        line = text.count("\n", 0, match.start()) + 1
        if not any(_resolves(f"{module}.{name}") for module in _module_of(path_word)):
            yield line, f"`{path_word}`'s `{name}`: no such name"
    for match in _LINK.finditer(text):
        if problem := _link_problem(document, match.group(1)):
            yield text.count("\n", 0, match.start()) + 1, problem
    for match in _QUOTED_SECTION.finditer(text):
        if problem := _section_problem(document, *match.groups()):
            yield text.count("\n", 0, match.start()) + 1, problem


def test_every_reference_in_the_docs_exists() -> None:
    missing = [f"{document.relative_to(ROOT)}:{line}: {problem}"
               for document in _documents() for line, problem in _problems(document)]
    assert not missing, "references to nothing:\n" + "\n".join(missing)


def test_the_docs_read_as_reference_not_as_a_log() -> None:
    """History goes to CHANGELOG.md and the git log, not into the docs."""
    marker = re.compile(r"\b(stop \d+|the (run|stop) before|until stop)\b", re.I)
    found = [f"{document.relative_to(ROOT)}:{number}: {line.strip()}"
             for document in _documents() if document.name != "CHANGELOG.md"
             for number, line in enumerate(document.read_text().splitlines(), 1)
             if marker.search(line)]
    assert not found, "lab-notebook history in a doc:\n" + "\n".join(found)


def test_the_checker_catches_what_it_should(tmp_path: Path) -> None:
    """Each rule reports a broken reference of its kind and passes a sound one."""
    api = ROOT / "docs" / "api.md"
    assert _link_problem(api, "recognition.md#no-such-heading") is not None
    assert _link_problem(api, "recognition.md#numbers") is None
    assert _section_problem(api, "docs/recognition.md", "No such section") is not None
    assert _section_problem(api, "docs/pipeline.md", "Progress and ETA") is None
    doc = tmp_path / "doc.md"
    doc.write_text("`providers/whisper.py`'s `NoSuchName`, `providers/whisper.py`'s "
                   "`WhisperRecognizer`\n```\n`transcriber/in_a_fence.py`\n```\n")
    assert [line for line, _ in _problems(doc)] == [1]
    assert _word_problem("transcriber/policy.py") == "no path transcriber/policy.py"
    assert _word_problem("transcriber/pipeline/policy.py") is None
    assert _word_problem("providers/nothing_here.py") is not None
    assert _word_problem("transcriber.pipeline.policy.NoSuchName") is not None
    assert _word_problem("transcriber.pipeline.policy") is None
    assert _word_problem("recognizer.no_such_key") is not None
    assert _word_problem("recognizer.batch_size") is None
    assert _word_problem("TRANSCRIBER_RECOGNIZER_NO_SUCH_KEY=1") is not None
    assert _word_problem("transcriber_no_such_metric_total{stage}") is not None
    assert _word_problem("transcriber_worker_runs_total{stage,outcome}") is None
    assert _word_problem("records.NO_SUCH_QUERY") is not None
    assert _word_problem("model.bin") is None
    assert _word_problem("no-such-view.js") is not None
    assert _word_problem("card-edit.js") is None


# -- docstrings ------------------------------------------------------------------------
#
# A docstring that cites a file or a module (`pipeline/parts.py`, "see
# transcriber/db/writer.py", `transcriber.ports.files`, `search.parse`) is held to
# the same rules: files and modules move (the floors of docs/architecture.md), and
# a docstring left pointing at the old place misleads the next reader exactly as a
# stale doc would. Only citations are read: a path, a name rooted at `transcriber.`
# or `tests.`, or `module.name` whose first part is a module of the package (and
# not a settings section, a local variable's usual name).
_PROSE_PATH = re.compile(r"(?<![\w/.])(?:transcriber|tests)/[\w/.-]*\w")


def _docstrings(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every bare string statement: module, class, function and
    attribute docstrings."""
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)):
            yield node.lineno, node.value.value


def _citation_problem(word: str) -> str | None:
    word = word.strip("\"'(),;:[]").removesuffix("…")
    if (not word or word in NOT_REFERENCES or word in NOT_CITATIONS or "<" in word
            or "…" in word or "{" in word):
        return None
    if "/" in word or word.endswith(BARE_FILE_ENDINGS):
        return _path_problem(word)
    plain = re.sub(r"\(.*$", "", word)
    if not _DOTTED.fullmatch(plain) or plain.rsplit(".", 1)[-1] in NOT_PYTHON_ENDINGS:
        return None
    first = plain.split(".", 1)[0]
    if first in ("transcriber", "tests"):
        return None if _resolves(plain) else f"no Python name {plain}"
    if first in _tables():
        return None  # a column (`recognitions.provider`), though a module has the name too
    if first in _module_files() and first not in _settings():
        return _dotted_problem(plain)
    if "_" in first and importlib.util.find_spec(first) is None:
        return f"no module {first}"  # `typed_text.x`: a module that moved or was renamed
    return None


def _docstring_problems(path: Path) -> Iterator[tuple[int, str]]:
    for line, text in _docstrings(path.read_text(encoding="utf-8")):
        for offset, span in _spans(text):
            for word in span.split():
                if problem := _citation_problem(word):
                    yield line + offset - 1, f"`{span.strip()}`: {problem}"
        for match in _PROSE_PATH.finditer(_SPAN.sub("", text)):
            if problem := _path_problem(match.group(0).rstrip(".")):
                yield line, f"{match.group(0)}: {problem}"


def test_every_file_or_module_a_docstring_cites_exists() -> None:
    missing = [f"{path.relative_to(ROOT)}:{line}: {problem}"
               for top in ("transcriber", "tests") for path in sorted((ROOT / top).rglob("*.py"))
               for line, problem in _docstring_problems(path)]
    assert not missing, "docstrings citing nothing:\n" + "\n".join(missing)


def test_the_docstring_check_catches_a_moved_module(tmp_path: Path) -> None:
    module = tmp_path / "cites.py"
    module.write_text('"""See `transcriber/files.py` and transcriber/keys.py, `typed_text.x`,\n'
                      '`transcriber.search_query.parse`; `pipeline/parts.py`, `text.text_problem`\n'
                      'and `search.parse` are where they are; `self.files` is no citation."""\n'
                      'def f() -> None:\n    """Also `stages.no_such_name`."""\n')
    found = sorted(line for line, _ in _docstring_problems(module))
    assert found == [1, 1, 1, 2, 5]
