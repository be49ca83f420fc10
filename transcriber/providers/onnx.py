"""onnxruntime, with its usage telemetry off before it starts.

onnxruntime (1.29 and later, on Linux too) sends usage events to Microsoft
(`mobile.events.data.microsoft.com`) by default; the service made that lookup 10-30 s
after its first session. A self-hosted service sends nothing anywhere its owner did not
configure, so every place that makes an `InferenceSession` gets the module from
`quiet_onnxruntime()`: the speaker embedder (`speakers/embedder.py`) and, before the
Whisper model loads, faster-whisper's Silero VAD, which makes its own session on the
first transcription with `vad_filter`.

`onnxruntime.disable_telemetry_events()` alone is not enough: measured under strace, the
lookup still came 10-30 s after the session with it called. What stops it is
`ORT_DISABLE_TELEMETRY=1` in the environment before onnxruntime initializes (no uploader
is created; the decision is latched for the process), so it is set before the import,
and the call is kept for older versions (which read only the call).
`tests/acceptance/test_no_phoning_home.py` watches a real `serve` under strace.
"""

from __future__ import annotations

import os
import threading
from types import ModuleType

TELEMETRY_VARIABLE = "ORT_DISABLE_TELEMETRY"

_lock = threading.Lock()
_quiet = False


def quiet_onnxruntime() -> ModuleType:
    """`onnxruntime`, imported, its telemetry turned off (once per process)."""
    global _quiet  # noqa: PLW0603 - one process-wide switch, set once
    # Read by onnxruntime when it initializes: before the import (the owner's own
    # value, if any, is kept).
    os.environ.setdefault(TELEMETRY_VARIABLE, "1")
    import onnxruntime  # noqa: PLC0415 - heavy, loaded only by its users

    module: ModuleType = onnxruntime
    with _lock:
        if not _quiet:
            onnxruntime.disable_telemetry_events()
            _quiet = True
    return module
