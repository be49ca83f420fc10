"""The tests' own house: shared helpers live in `tests/helpers/`, conftests define
fixtures only, and no module imports a conftest or a test module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
# Run as `python -m ...` by real processes, so they stay where their users name them.
ENTRY_POINTS = {"serve_with_fakes.py", "bench/speaker_long.py", "bench/bare_whisper.py",
                "bench/card_shapes.py"}


def _modules() -> list[Path]:
    return sorted(TESTS.rglob("*.py"))


def _imported(tree: ast.Module) -> list[str]:
    """The tests' own modules an import statement names: `from a import b` names a, or
    a.b when b is a module (a relative import counts as the tests' own)."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            names += [f"{module}.{alias.name}" if _bad(alias.name) else module
                      for alias in node.names]
    return [name for name in names if name.split(".")[0] in {"tests", "conftest", ""}]


def _bad(name: str) -> bool:
    return any(part == "conftest" or part.startswith("test_") for part in name.split("."))


def _bad_imports(tree: ast.Module) -> list[str]:
    return sorted({name for name in _imported(tree) if _bad(name)})


def _is_fixture(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return (isinstance(target, ast.Attribute) and target.attr == "fixture"
            and isinstance(target.value, ast.Name) and target.value.id == "pytest")


def _not_a_fixture(statement: ast.stmt) -> str | None:
    """What a conftest statement defines besides fixtures and hooks, or None."""
    if isinstance(statement, ast.Import | ast.ImportFrom):
        return None
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
        return None  # the docstring
    if (isinstance(statement, ast.If) and isinstance(statement.test, ast.Name)
            and statement.test.id == "TYPE_CHECKING"):
        return None
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
        if statement.name.startswith("pytest_") or any(
                _is_fixture(d) for d in statement.decorator_list):
            return None
        return f"function {statement.name}"
    return f"line {statement.lineno}: {type(statement).__name__}"


def test_no_module_imports_a_conftest_or_a_test_module() -> None:
    found = {str(path.relative_to(TESTS)): bad for path in _modules()
             if (bad := _bad_imports(ast.parse(path.read_text())))}
    assert found == {}


def test_conftests_define_fixtures_and_hooks_only() -> None:
    found = {}
    for path in TESTS.rglob("conftest.py"):
        others = [what for statement in ast.parse(path.read_text()).body
                  if (what := _not_a_fixture(statement))]
        if others:
            found[str(path.relative_to(TESTS))] = others
    assert found == {}


def test_shared_helpers_live_in_tests_helpers() -> None:
    strays = [name for path in _modules()
              if not (name := str(path.relative_to(TESTS).as_posix())).startswith("helpers/")
              and not path.name.startswith("test_")
              and path.name not in {"conftest.py", "__init__.py"}
              and name not in ENTRY_POINTS]
    assert strays == []


@pytest.mark.parametrize(("source", "bad"), [
    ("from tests.conftest import SettingsFactory", True),
    ("from tests.integration.web import conftest", True),
    ("import tests.acceptance.test_serve", True),
    ("from tests.acceptance.test_serve import free_port", True),
    ("from tests.helpers.processes import free_port", False),
    ("from tests.helpers import speech_audio", False),
    ("from .conftest import Client", True),
    ("from aiohttp.test_utils import TestClient", False),
])
def test_the_import_check_tells_a_conftest_or_test_module(source: str, bad: bool) -> None:
    assert bool(_bad_imports(ast.parse(source))) is bad


@pytest.mark.parametrize(("source", "kind"), [
    ("@pytest.fixture\ndef clock(): ...", None),
    ("@pytest.fixture(scope='session')\nasync def model(): ...", None),
    ("def pytest_collection_modifyitems(config, items): ...", None),
    ("def helper(): ...", "function helper"),
    ("ALICE = 111", "line 1: Assign"),
    ("class Harness: ...", "line 1: ClassDef"),
])
def test_the_conftest_check_tells_what_is_not_a_fixture(source: str, kind: str | None) -> None:
    [statement] = ast.parse(source).body
    assert _not_a_fixture(statement) == kind
