"""`transcriber status` starts light: no heavy library is loaded by the command line's
entry and the status command (docs/architecture.md, "Heavy libraries load when used").

Run in a fresh interpreter: this test process has loaded half the service already.
The bench (tests/bench/test_startup.py) measures the time; this keeps the cause away.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

# Each loads in tens to hundreds of milliseconds, and none is needed to count records.
HEAVY = ("asyncpg", "numpy", "faster_whisper", "ctranslate2", "onnxruntime", "aiogram",
         "aiobotocore", "botocore", "jsonschema", "Stemmer", "tqdm", "av", "pydantic",
         "transcriber.domain.voices", "transcriber.db.postgres.connection",
         "transcriber.domain.transcripts", "transcriber.providers", "transcriber.pipeline",
         "transcriber.service", "transcriber.web", "transcriber.bot")

_PROBE = textwrap.dedent("""
    import json, sys
    from transcriber.cli import main
    from transcriber.cli.parser import build_parser
    import transcriber.cli.status
    args = build_parser().parse_args(["status"])
    assert args.command == "status"
    code = main(["status"])
    print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
""")


def test_status_loads_no_heavy_module(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRANSCRIBER_")}
    env["TRANSCRIBER_STORAGE_DATA_DIR"] = str(tmp_path / "data")
    # No server answers on a port nobody listens on: the status reads the database only.
    env["TRANSCRIBER_SERVER_PORT"] = "9"
    done = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["code"] == 0
    modules = set(answer["modules"])
    loaded = sorted(name for name in HEAVY
                    if name in modules or any(m.startswith(name + ".") for m in modules))
    assert loaded == [], f"transcriber status loaded {loaded}"


def test_the_probe_sees_a_heavy_import(tmp_path: Path) -> None:
    """The check can fail: the same probe, importing numpy, finds it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRANSCRIBER_")}
    probe = "import json, sys\nimport transcriber.domain.voices\n" \
            "print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                          text=True, timeout=120, check=True)
    modules = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert {"numpy", "transcriber.domain.voices"} <= modules


_DOCUMENT_PROBE = textwrap.dedent("""
    import json, sys
    import transcriber.service.app
    from transcriber.settings import ServerSettings
    from transcriber.web.openapi import openapi_document
    before = "pydantic" in sys.modules
    document = openapi_document(ServerSettings(), routes=())
    print(json.dumps({"before": before, "after": "pydantic" in sys.modules,
                      "card": "Card" in document["components"]["schemas"]}))
""")


def test_the_schema_library_loads_only_when_the_openapi_document_is_built() -> None:
    """The service's app and every route load without pydantic (domain/shapes.py declares
    the response shapes without it); building the document loads it: the probe sees it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRANSCRIBER_")}
    done = subprocess.run([sys.executable, "-c", _DOCUMENT_PROBE], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "before": False, "after": True, "card": True}
