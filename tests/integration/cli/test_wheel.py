"""The built wheel installs and runs on its own: no editable install, no source tree.

The wheel is built from this checkout, installed without dependencies into a
fresh virtual environment whose only other packages are the test
environment's site-packages, added as a plain path (so the editable install's
finder there never runs), and its console script migrates a new data folder
and transcribes a short clip from a folder outside the checkout.
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
CLIP = ROOT / "tests" / "fixtures" / "audio" / "librivox_0880.mp3"

pytestmark = pytest.mark.slow


def _run(*command: str | Path, cwd: Path, env: dict[str, str] | None = None,
         timeout: float = 300) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(part) for part in command], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=timeout, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
         "-w", out, ROOT, cwd=out)
    [built] = out.glob("transcriber-*.whl")
    return built


def test_the_wheel_carries_the_migrations_and_the_assets(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    prefix = "transcriber/migrations/"
    shipped = sorted(n.removeprefix(prefix) for n in names if n.startswith(prefix))
    # Both sets: SQLite's and, in its own folder, PostgreSQL's.
    assert shipped == sorted(str(p.relative_to(ROOT / "migrations"))
                             for p in (ROOT / "migrations").glob("**/*.sql"))
    assert "transcriber/py.typed" in names
    assert "transcriber/web/assets/index.html" in names
    assert not any(n.startswith(("tests/", "migrations/")) for n in names)


def test_an_installed_wheel_migrates_and_transcribes(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path)
    python = venv / "bin" / "python"
    purelib = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                        cwd=tmp_path).stdout.strip())
    # The dependencies, as a plain path entry: .pth files there are not processed.
    deps = [sysconfig.get_paths()["purelib"], *site.getsitepackages()]
    (purelib / "test_dependencies.pth").write_text("\n".join(dict.fromkeys(deps)) + "\n")
    # --ignore-installed: the editable dist-info on the dependency path must not
    # make pip skip (or, worse, uninstall) anything.
    _run(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps",
         "--ignore-installed", "-q", wheel, cwd=tmp_path)
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("TRANSCRIBER_", "PYTHON"))}
    env["TRANSCRIBER_STORAGE_DATA_DIR"] = str(work / "data")
    where = _run(python, "-c", "import transcriber; print(transcriber.__file__)",
                 cwd=work, env=env).stdout
    assert where.startswith(str(purelib)), where
    script = venv / "bin" / "transcriber"
    migrated = _run(script, "migrate", cwd=work, env=env)
    count = len(list((ROOT / "migrations").glob("*.sql")))
    assert migrated.stdout.strip() == f"applied {count} migration(s)"
    assert (work / "data" / "transcriber.sqlite3").exists()
    done = _run(script, "transcribe", CLIP, cwd=work, env=env, timeout=600)
    assert "young man" in done.stdout.lower(), done.stdout
