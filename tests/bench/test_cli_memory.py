"""What a 512 MiB transcript costs `transcriber upload --wait`: its peak memory by cap.

The real command as a child process against the hostile server of
tests/helpers/hostile_server.py, which streams a generated 512 MiB transcript
without a `Content-Length` (so the cap is reached by counting, not by the
header). For each `--max-transcript-mib` it prints the client's peak RSS after
an ordinary run and after the huge one, and how much the server got to send
before the client hung up; 1024 MiB is no cap at all for this answer (the
whole transcript is read, decoded and written), the client as it was before
the cap. The numbers are in docs/hostile-input.md, "The command-line client".

Run: `PYTHONPATH=$PWD python -m pytest -m bench -s -p no:cacheprovider
tests/bench/test_cli_memory.py`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from aiohttp import web

from tests.helpers.hostile_server import hostile_server, run_cli

pytestmark = pytest.mark.bench

MIB = 1024 * 1024
CAPS = ("16", "64", "1024")


async def test_peak_memory_of_a_512_mib_transcript_by_cap(tmp_path: Path) -> None:
    audio = tmp_path / "talk.mp3"
    audio.write_bytes(bytes(3000))
    out = tmp_path / "out"
    out.mkdir()
    async with hostile_server() as server:
        async def huge(request: web.Request) -> web.StreamResponse:
            return await server.stream_transcript(request, total=512 * MIB, declared=False)

        for cap in CAPS:
            argv = ("upload", str(audio), "--server", server.base, "--wait",
                    "--max-transcript-mib", cap, "--output", str(out), "--force")
            server.transcript = None
            ordinary = await run_cli(*argv, data_dir=tmp_path)
            assert ordinary.code == 0, ordinary.err
            server.transcript, server.sent_bytes = huge, 0
            run = await run_cli(*argv, data_dir=tmp_path)
            print(f"cap {cap:>4} MiB: exit {run.code}, peak RSS "
                  f"{ordinary.max_rss_kib // 1024} MiB -> {run.max_rss_kib // 1024} MiB, "
                  f"the server sent {server.sent_bytes // MIB} MiB")
            assert run.code == (0 if cap == "1024" else 4), run.err
