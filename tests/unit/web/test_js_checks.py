"""The web app's JS, checked: TypeScript's compiler over the JSDoc types (`// @ts-check`
in every file, `tsconfig.json`) and ESLint (`eslint.config.js`), both pinned in
`package.json`/`package-lock.json` and installed by `.ci/dev test` (`npm ci` into
`node_modules/`). The app itself has no build step: the browser loads the same files.

Without the tools here the tests skip; under CI they fail. Two fixtures under
`tests/unit/web/js/` prove each check fails on what it is there to catch.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from transcriber.web.spa import ASSETS_DIR

ROOT = Path(__file__).resolve().parents[3]
BIN = ROOT / "node_modules" / ".bin"
FIXTURES = Path(__file__).with_name("js")
# Generous: tsc takes under a second and ESLint a few on an idle machine; the
# limit only stops a hung tool from hanging the suite.
TIMEOUT_SECONDS = 120


def _tool(name: str) -> Path:
    path = BIN / name
    if not path.exists():
        reason = f"{path} is missing (npm ci, as .ci/dev test does)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return path


def _run(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(_tool(name)), *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=TIMEOUT_SECONDS, check=False)


def _app_files() -> list[Path]:
    return sorted(ASSETS_DIR.glob("*.js"))


def test_every_app_file_asks_for_the_type_check() -> None:
    unchecked = [p.name for p in _app_files()
                 if not p.read_text().startswith("// @ts-check\n")]
    assert not unchecked, f"first line must be // @ts-check: {unchecked}"


def test_the_type_check_covers_every_app_file() -> None:
    listed = _run("tsc", "-p", "tsconfig.json", "--listFilesOnly")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    checked = {Path(line).resolve() for line in listed.stdout.splitlines() if line.strip()}
    missing = [p.name for p in _app_files() if p.resolve() not in checked]
    assert not missing, f"tsconfig.json leaves out {missing}"


def test_the_app_type_checks() -> None:
    result = _run("tsc", "-p", "tsconfig.json")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_app_lints() -> None:
    result = _run("eslint", "--max-warnings", "0", str(ASSETS_DIR.relative_to(ROOT)))
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_type_error_fails_the_type_check() -> None:
    # The fixture passes a string where format.duration's JSDoc says number.
    result = _run("tsc", "-p", str((FIXTURES / "tsconfig.json").relative_to(ROOT)))
    assert result.returncode != 0
    errors = re.findall(r"^(\S+)\(\d+,\d+\): error (TS\d+)", result.stdout, re.M)
    assert errors == [(f"{FIXTURES.relative_to(ROOT)}/type_error.js", "TS2345")], result.stdout


def test_eval_fails_the_lint() -> None:
    result = _run("eslint", "--format", "json",
                  str((FIXTURES / "lint_error.js").relative_to(ROOT)))
    assert result.returncode != 0
    assert '"ruleId":"no-eval"' in result.stdout.replace(" ", ""), result.stdout
