"""How fast the command line answers, against the bare import of its base libraries.

Goal (docs/architecture.md): `transcriber status`, `transcriber resume --help` and
`transcriber --help` each take at most 2x `python -c "import aiohttp, aiosqlite,
structlog"`, measured side by side in one run: the baseline and each command
alternate, and the ratio is the median over the pairs. Run: `sh .ci/dev bench -k
startup` (or `pytest -m bench -s tests/bench/test_startup.py`).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.bench

PAIRS = int(os.environ.get("TRANSCRIBER_BENCH_STARTUP_PAIRS", "9"))
BASELINE = [sys.executable, "-c", "import aiohttp, aiosqlite, structlog"]
COMMANDS = {
    "transcriber status": ["status"],
    "transcriber resume --help": ["resume", "--help"],
    "transcriber --help": ["--help"],
}
GOAL = 2.0


def _seconds(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True, capture_output=True, timeout=120)
    return time.perf_counter() - started


def test_commands_start_within_twice_the_base_imports(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRANSCRIBER_")}
    env["TRANSCRIBER_STORAGE_DATA_DIR"] = str(tmp_path / "data")
    cli = [sys.executable, "-m", "transcriber.cli"]
    subprocess.run([*cli, "migrate"], env=env, check=True, capture_output=True)
    ratios: dict[str, float] = {}
    print(f"\nstart-up, median of {PAIRS} pairs (command / baseline):")
    for name, args in COMMANDS.items():
        _seconds([*cli, *args], env)  # warm the file cache
        pairs = [(_seconds([*cli, *args], env), _seconds(BASELINE, env)) for _ in range(PAIRS)]
        ratios[name] = statistics.median(a / b for a, b in pairs)
        command_s = statistics.median(a for a, _ in pairs)
        base_s = statistics.median(b for _, b in pairs)
        print(f"  {name:28} {command_s * 1000:7.0f} ms vs {base_s * 1000:5.0f} ms"
              f"  ratio {ratios[name]:.2f} (goal <= {GOAL})")
    assert all(ratio <= GOAL for ratio in ratios.values()), ratios
