"""The layers point down: a module imports only its own layer or the ones below.

Every import of every module under `transcriber/` is read (function-level
and `TYPE_CHECKING` imports included, since they are dependencies all the
same), and each must go to a layer at or below the importer's. The ranks:
the leaves at the bottom; storage (`db/`); providers; the pipeline and
intake; the app keys; the doors; the composition (`service/`, `loadtest/`);
the command line; `testing/`, which only tests import.
"""

from __future__ import annotations

import ast
from pathlib import Path

import transcriber

PACKAGE = Path(transcriber.__file__).parent
LEAVES = ("errors", "ids", "clock", "stages", "settings", "observability", "ports",
          "transcripts", "files", "typed_text")
RANKS: dict[str, int] = {
    **dict.fromkeys(LEAVES, 0),
    "db": 1,
    "providers": 2,
    "pipeline": 3, "intake": 3,
    "keys": 4,
    "web": 5, "bot": 5,
    "service": 6, "loadtest": 6,
    "cli": 7,
    "testing": 8,
}


def _part(module: str) -> str:
    """`transcriber.db.writer` -> `db`; the package itself -> ``."""
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else ""


def _imports(path: Path) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
            # `from transcriber import keys` names a module too.
            found.extend(f"{node.module}.{alias.name}" for alias in node.names
                         if node.module == "transcriber")
    return [name for name in found if name.startswith("transcriber.")]


def _modules() -> list[tuple[str, Path]]:
    return [(".".join(("transcriber", *path.relative_to(PACKAGE).with_suffix("").parts)), path)
            for path in sorted(PACKAGE.rglob("*.py"))]


def test_every_part_of_the_package_has_a_rank() -> None:
    parts = {_part(module) for module, _ in _modules()} - {"__init__", "__main__", ""}
    assert parts <= set(RANKS), f"give these a rank: {sorted(parts - set(RANKS))}"


def test_imports_point_down() -> None:
    upward = []
    for module, path in _modules():
        own = _part(module)
        if own not in RANKS:
            continue
        for target in _imports(path):
            other = _part(target)
            if other in RANKS and RANKS[other] > RANKS[own]:
                upward.append(f"{module} -> {target}")
    assert upward == []


def test_only_tests_import_the_fakes() -> None:
    leaking = [f"{module} -> {target}" for module, path in _modules()
               if _part(module) != "testing"
               for target in _imports(path) if _part(target) == "testing"]
    assert leaking == []


def test_storage_imports_only_itself_and_the_leaves() -> None:
    above = [f"{module} -> {target}" for module, path in _modules() if _part(module) == "db"
             for target in _imports(path) if _part(target) not in ("db", *LEAVES)]
    assert above == []


# What the pipeline may take from providers: the ports and pure helpers, never an
# adapter (ffmpeg, Whisper, SpeechKit, the object store, the speaker engine): those
# come in through `build_step_table`, composed by the service.
PIPELINE_MAY_USE = frozenset({
    "transcriber.providers.recognizer", "transcriber.providers.speaker_port",
    "transcriber.providers.speaker_words", "transcriber.providers.structure",
    "transcriber.providers.languages",
})


def test_the_pipeline_sees_ports_not_adapters() -> None:
    adapters = [f"{module} -> {target}" for module, path in _modules()
                if _part(module) == "pipeline"
                for target in _imports(path)
                if _part(target) == "providers" and target not in PIPELINE_MAY_USE]
    assert adapters == []
