"""One meaning per class name: no two modules of the package define a class (or a
type alias) of the same name.

A name read in a traceback, a log or a review then points at one thing: the
webhook's `DeliveryVerdict` is not the rate limiter's `RateVerdict`, the reply's
`ReplyDelivery` (a Telegram reply on its way) not a webhook delivery's
`DeliveryState`. Module-level classes (dataclasses, enums, Protocols, named
tuples and exceptions alike) and type aliases are read from the source; an alias
used in several modules is defined once and imported. The record-file store is
one name too: the port `RecordFiles`, its adapters `LocalRecordFiles` and
`S3RecordFiles`.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import transcriber

PACKAGE = Path(transcriber.__file__).parent


def _classes(source: str) -> list[str]:
    return [node.name for node in ast.parse(source).body if isinstance(node, ast.ClassDef)]


def _type_names(source: str) -> list[str]:
    """Module-level classes and type aliases (`Outcome = Literal[...]`, `Hook =
    Callable[...]`, `Outcome = Advanced | Deferred`); a plain re-binding of another
    name (as in MoveError = rows.MoveError) is that name, not a second one."""
    found = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef):
            found.append(node.name)
        elif (isinstance(node, ast.Assign) and len(node.targets) == 1
              and isinstance(node.targets[0], ast.Name) and node.targets[0].id[:1].isupper()
              and not node.targets[0].id.isupper()
              and isinstance(node.value, ast.Subscript | ast.BinOp)):
            found.append(node.targets[0].id)
        elif (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
              and "TypeAlias" in ast.unparse(node.annotation)):
            found.append(node.target.id)
    return found


def _duplicates(sources: dict[str, str]) -> dict[str, list[str]]:
    where: dict[str, list[str]] = defaultdict(list)
    for module, source in sorted(sources.items()):
        for name in _type_names(source):
            where[name].append(module)
    return {name: modules for name, modules in where.items() if len(modules) > 1}


def test_no_class_or_type_name_means_two_things() -> None:
    sources = {str(path.relative_to(PACKAGE)): path.read_text(encoding="utf-8")
               for path in sorted(PACKAGE.rglob("*.py"))}
    assert _duplicates(sources) == {}


def test_the_check_finds_a_name_defined_twice() -> None:
    sources = {"a.py": "class Verdict:\n    pass\n",
               "b.py": "import enum\nclass Verdict(enum.Enum):\n    X = 1\n",
               "c.py": "def f() -> None:\n    class Verdict:  # local: not a module's name\n"
                       "        pass\n",
               "d.py": "Outcome = Literal['delivered', 'retry']\nVerdict = a.Verdict\n",
               "e.py": "Outcome = Advanced | Deferred\nMAX_ONE = 1\nWord = str\n"}
    assert _duplicates(sources) == {"Verdict": ["a.py", "b.py"], "Outcome": ["d.py", "e.py"]}


def test_the_file_store_has_one_name() -> None:
    names = {name for path in PACKAGE.rglob("*.py")
             for name in _classes(path.read_text(encoding="utf-8"))}
    assert {"RecordFiles", "LocalRecordFiles", "S3RecordFiles"} <= names
    assert "RecordStore" not in names
