"""onnxruntime's telemetry is off before it starts (docs/operations.md, "Nothing phones
home"): the speaker embedder's session is made with `ORT_DISABLE_TELEMETRY=1` set before
onnxruntime was first imported, and an owner's own value is kept. In a fresh process,
since the variable is read once, when onnxruntime initializes. The strace of a real
serve is tests/acceptance/test_no_phoning_home.py."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = """
import os, sys
assert "onnxruntime" not in sys.modules
from transcriber.providers.speakers.embedder import SpeakerEmbedder
assert "onnxruntime" not in sys.modules  # imported only when a session is made
SpeakerEmbedder()
print(os.environ.get("ORT_DISABLE_TELEMETRY"))
"""


def _probe(**env: str) -> str:
    environment = {key: value for key, value in os.environ.items()
                   if key != "ORT_DISABLE_TELEMETRY"}
    done = subprocess.run([sys.executable, "-c", PROBE], env={**environment, **env},
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_embedders_session_is_made_with_telemetry_off() -> None:
    assert _probe() == "1"


def test_an_owners_own_value_is_kept() -> None:
    assert _probe(ORT_DISABLE_TELEMETRY="0") == "0"
