"""The systemd unit example (`deploy/systemd/transcriber.service`): systemd reads it
without a complaint, and it gives the service the time its own stop takes (a unit
that SIGKILLs before `server.shutdown_forced_seconds` would cut the drain short)."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from transcriber.settings import ServerSettings

UNIT = Path(__file__).resolve().parents[2] / "deploy" / "systemd" / "transcriber.service"


def _unit() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment, method-assign]
    parser.read_string(UNIT.read_text())
    return parser


def test_the_unit_serves_with_the_settings_file_and_waits_out_the_stop() -> None:
    service = _unit()["Service"]
    assert service["ExecStart"].endswith("/bin/transcriber serve")
    assert "TRANSCRIBER_CONFIG=/etc/transcriber/transcriber.toml" in UNIT.read_text()
    assert service["KillSignal"] == "SIGTERM"
    assert int(service["TimeoutStopSec"]) > ServerSettings().shutdown_forced_seconds
    assert service["Restart"] == "on-failure"


def test_systemd_reads_the_unit_without_a_complaint(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:  # a machine without systemd: the unit's fields are checked above
        pytest.skip("systemd-analyze is missing")
    # The unit as installed, its command pointed at this interpreter's `transcriber`.
    here = Path(sys.executable).parent / "transcriber"
    unit = tmp_path / "transcriber.service"
    unit.write_text(UNIT.read_text().replace("/opt/transcriber/bin/transcriber", str(here)))
    checked = subprocess.run([analyze, "verify", str(unit)], capture_output=True, text=True,
                             timeout=60, check=False)
    assert checked.returncode == 0, checked.stderr
    assert checked.stderr.strip() == "", checked.stderr
