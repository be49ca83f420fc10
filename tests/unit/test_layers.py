"""The floors point down: a module imports only its own floor or the ones below.

Every import of every module under `transcriber/` is read (function-level
and `TYPE_CHECKING` imports included, since they are dependencies all the
same), and each must go to a floor at or below the importer's. The ranks are
by package, with no list of modules: `core` (no domain word), `domain` (pure
feature rules), `settings` and `ports`, storage (`db/`), `providers`, the
pipeline and the follow-ups of `done` (`followups/`), the doors (`web`, `bot`),
`maintenance`, the composition (`service`, `loadtest`), the command line, and
`testing`, which only tests import. The top level holds packages only, and each
package's `__init__` says what lives there and what it may import. The
pipeline sees the providers only through the ports, and the rest of the
service sees the speaker engine only through its façade.
"""

from __future__ import annotations

import ast
from pathlib import Path

import transcriber

PACKAGE = Path(transcriber.__file__).parent
# By package: the top level holds packages only (a loose module has no rank and fails
# `test_every_part_of_the_package_has_a_rank`), so no module is named one by one.
RANKS: dict[str, int] = {
    "core": 0,
    "domain": 1,
    "settings": 2, "ports": 2,
    "db": 3,
    "providers": 4,
    "pipeline": 5, "followups": 5, "ask": 5,
    "web": 6, "bot": 6, "voice": 6,
    "maintenance": 7,
    "service": 8, "loadtest": 8,
    "cli": 9,
    "testing": 10,
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


def _module_name(path: Path) -> str:
    """`db/writer.py` -> `transcriber.db.writer`; a package's `__init__.py` is the package
    itself (`ports/__init__.py` -> `transcriber.ports`), the name its importers use."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(("transcriber", *parts))


def _modules() -> list[tuple[str, Path]]:
    return [(_module_name(path), path) for path in sorted(PACKAGE.rglob("*.py"))]


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


def test_storage_imports_only_itself_and_the_floors_below() -> None:
    below = {part for part, rank in RANKS.items() if rank < RANKS["db"]}
    above = [f"{module} -> {target}" for module, path in _modules() if _part(module) == "db"
             for target in _imports(path) if _part(target) not in {"db", *below}]
    assert above == []


def test_the_pipeline_imports_nothing_of_the_providers() -> None:
    """Adapters (ffmpeg, Whisper, SpeechKit, the object store, the speaker engine) come
    in through `build_step_table`, composed by the service; a step sees their ports."""
    reaching = [f"{module} -> {target}" for module, path in _modules()
                if _part(module) == "pipeline"
                for target in _imports(path) if _part(target) == "providers"]
    assert reaching == []


ENGINE = "transcriber.providers.speakers"


def test_the_speaker_engine_is_used_through_its_facade() -> None:
    """Outside the engine's package only the names its `__init__` gives are used."""
    inside = [f"{module} -> {target}" for module, path in _modules()
              if not module.startswith(f"{ENGINE}.") and module != ENGINE
              for target in _imports(path) if target.startswith(f"{ENGINE}.")]
    assert inside == []


def _module_level_imports(path: Path) -> list[str]:
    """What the module imports as it loads: not inside a function, not under
    `TYPE_CHECKING` (those cannot make a circle at import time)."""
    found: list[str] = []
    body = ast.parse(path.read_text(encoding="utf-8")).body
    for node in body:
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
            found.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return [name for name in found if name.startswith("transcriber.")]


def test_no_module_imports_itself_back() -> None:
    """No circle of module-level imports: a module is never loaded half done."""
    known = dict(_modules())
    graph = {module: sorted({target for target in _module_level_imports(path)
                             if target in known and target != module})
             for module, path in known.items()}
    circles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        path.append(module)
        for target in graph[module]:
            if state.get(target) == 1:
                circles.append([*path[path.index(target):], target])
            elif target not in state:
                visit(target)
        path.pop()
        state[module] = 2

    for module in graph:
        if module not in state:
            visit(module)
    assert circles == []


def test_imports_of_a_package_are_edges_of_the_circle_check() -> None:
    """A package's `__init__` is named as its importers name it, so `from transcriber.ports
    import …` is an edge (named `….__init__`, such imports once fell out of the graph)."""
    known = dict(_modules())
    assert "transcriber.ports" in known
    assert "transcriber.providers.speakers" in known
    assert "transcriber.ports" in _module_level_imports(known["transcriber.pipeline.parts"])


def _packages() -> list[Path]:
    """Every folder of modules (one without an `__init__` would be a namespace package,
    unsaid: it is reported as a package with no docstring)."""
    return sorted({path.parent for path in PACKAGE.rglob("*.py")})


def test_every_package_says_what_lives_there_and_what_it_may_import() -> None:
    """Each package's `__init__` opens with a docstring of a few lines: what lives in
    it, and (a sentence with "Imports:") which floors it may import. The ranks above
    hold the imports; the docstring tells a reader where a new module goes."""
    unsaid = []
    for package in _packages():
        init = package / "__init__.py"
        source = init.read_text(encoding="utf-8") if init.exists() else ""
        doc = ast.get_docstring(ast.parse(source))
        name = ".".join(package.relative_to(PACKAGE.parent).parts)
        if not doc or "Imports:" not in doc:
            unsaid.append(f"{name}: no docstring saying what it may import")
        elif len(doc.splitlines()) > 16:
            unsaid.append(f"{name}: a docstring of {len(doc.splitlines())} lines (a few, please)")
    assert unsaid == []


def test_the_top_level_holds_packages_only() -> None:
    """A loose module at the top would be a floor of its own, unranked."""
    loose = sorted(path.name for path in PACKAGE.glob("*.py") if path.name != "__init__.py")
    assert loose == []
