"""pyproject's explicit package list names every package of the tree."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_folder_of_the_package_is_listed_for_the_wheel() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    on_disk = {".".join(path.relative_to(ROOT).parts)
               for path in [ROOT / "transcriber", *(ROOT / "transcriber").rglob("*")]
               if path.is_dir() and path.name != "__pycache__"}
    assert listed == on_disk | {"transcriber.migrations"}
    assert config["tool"]["setuptools"]["package-dir"] == {"transcriber.migrations": "migrations"}
