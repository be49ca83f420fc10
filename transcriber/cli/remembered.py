"""The resumable uploads `transcriber upload` has not finished, remembered across runs.

A run stopped in the middle (Ctrl-C, a laptop closed, the process killed) leaves
its upload on the server; the next run of the same file (the same server, path,
size and modification time) asks the server where it stands (`HEAD`) and goes on
from there instead of sending the file again. The memory is one small JSON file,
`$XDG_CACHE_HOME/transcriber/uploads.json` (`~/.cache/...` without the variable),
readable by its owner only; it holds upload addresses, never a token or a byte of
a file. A file it cannot read is an empty memory (the upload starts again).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

import orjson

# More would be uploads nobody is coming back for; the oldest are forgotten first.
MOST = 100


def memory_file(environ: Mapping[str, str]) -> Path:
    cache = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "transcriber" / "uploads.json"


def key_of(server: str, path: Path, size: int) -> str:
    try:
        modified = path.stat().st_mtime_ns
    except OSError:
        modified = 0
    return f"{server}|{path.resolve()}|{size}|{modified}"


def _read(file: Path) -> dict[str, str]:
    try:
        loaded = orjson.loads(file.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    return {str(k): v for k, v in loaded.items() if isinstance(v, str)}


def _write(file: Path, memory: dict[str, str]) -> None:
    with contextlib.suppress(OSError):  # no memory is no worse than before it existed
        file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle, temp = tempfile.mkstemp(dir=file.parent, prefix=".uploads.")
        with os.fdopen(handle, "wb") as out:
            out.write(orjson.dumps(dict(list(memory.items())[-MOST:])))
        os.replace(temp, file)


def recall(file: Path, key: str) -> str | None:
    return _read(file).get(key)


def remember(file: Path, key: str, location: str) -> None:
    memory = _read(file)
    memory.pop(key, None)
    memory[key] = location
    _write(file, memory)


def forget(file: Path, key: str) -> None:
    memory = _read(file)
    if memory.pop(key, None) is not None:
        _write(file, memory)
