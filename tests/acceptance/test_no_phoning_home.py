"""The service sends nothing anywhere its owner did not configure (docs/operations.md,
"Nothing phones home"): a real `transcriber serve` under `strace -f -e trace=network`,
idle and then transcribing a short two-speaker recording with the real Whisper model
and the speaker engine (whose onnxruntime sessions are what phoned home), and a Russian
one routed to a GigaAM folder (onnx-asr's sessions, a tiny model), makes no
connection and sends no datagram to any address but loopback, and no DNS lookup.

onnxruntime's usage telemetry looked up `mobile.events.data.microsoft.com` 10-30 s after
the first session was made; the test stays up 40 s past the transcription for it."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import aiohttp
import orjson
import pytest

from tests.helpers.audio import FIXTURES
from tests.helpers.gigaam_model import build_model
from tests.helpers.processes import free_port, start_server_under, wait_ready

pytestmark = pytest.mark.slow

IDLE_SECONDS = 15.0
AFTER_SECONDS = 40.0
WAIT_SECONDS = 300.0
# connect/sendto/sendmsg with an IPv4 or IPv6 address, as strace prints them
_ADDRESS = re.compile(
    r'(?:sin_addr=inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)")')
_LOOPBACK = re.compile(r"^(?:127\.|::1$|::ffff:127\.)")


def outbound(trace: str) -> list[str]:
    """The strace lines that reach an address other than loopback (connect, sendto,
    sendmsg, sendmmsg): a DNS lookup is one (a datagram to the resolver)."""
    found = []
    for line in trace.splitlines():
        if not re.search(r"\b(connect|sendto|sendmsg|sendmmsg)\(", line):
            continue
        for v4, v6 in _ADDRESS.findall(line):
            if not _LOOPBACK.match(v4 or v6):
                found.append(line)
    return found


def test_outbound_finds_a_lookup_and_passes_loopback() -> None:
    lookup = ('3991  connect(8, {sa_family=AF_INET, sin_port=htons(53), '
              'sin_addr=inet_addr("10.255.255.53")}, 16) = 0')
    local = ('4000  connect(9, {sa_family=AF_INET, sin_port=htons(8080), '
             'sin_addr=inet_addr("127.0.0.1")}, 16) = 0')
    six = ('4001  connect(9, {sa_family=AF_INET6, sin6_port=htons(443), '
           'sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "2603:1061::1", &sin6_addr), '
           'sin6_scope_id=0}, 28) = -1 ENETUNREACH')
    assert outbound("\n".join([lookup, local, six])) == [lookup, six]


async def _transcribe(port: int, name: str, data: bytes,
                      query: str = "") -> dict:  # type: ignore[type-arg]
    base = f"http://127.0.0.1:{port}/app/audiorecords"
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as session:
        async with session.post(base + query, data=data,
                                headers={"X-Filename": name}) as resp:
            assert resp.status == 201, await resp.text()
            record_id = orjson.loads(await resp.read())["id"]
        deadline = asyncio.get_running_loop().time() + WAIT_SECONDS
        while True:
            async with session.get(f"{base}/{record_id}") as resp:
                card: dict = orjson.loads(await resp.read())  # type: ignore[type-arg]
            assert card.get("halt") is None, card
            if card["stage"] == "done":
                return card
            assert asyncio.get_running_loop().time() < deadline, card["stage"]
            await asyncio.sleep(1.0)


def _stop_traced(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the traced serve (strace itself would detach and leave it running);
    strace ends with it."""
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    pids = children.read_text().split() if children.exists() else []
    for pid in pids:
        os.kill(int(pid), signal.SIGTERM)
    if not pids:
        proc.terminate()


def test_serve_idle_and_busy_connects_only_to_loopback(data_dir: Path,
                                                      tmp_path: Path) -> None:
    strace = shutil.which("strace")
    if strace is None:
        pytest.skip("apt-get install strace (.ci/dev test installs it)")
    trace_file = tmp_path / "network.trace"
    port = free_port()
    # Russian goes to a GigaAM folder: onnx-asr's sessions are watched too.
    build_model(tmp_path / "models" / "gigaam-v3", [("привет", 5)])
    proc = start_server_under(
        (strace, "-f", "-qq", "-e", "trace=network", "-o", str(trace_file)), data_dir, port,
        TRANSCRIBER_PIPELINE_WORKERS="1", TRANSCRIBER_STORAGE_MIN_FREE_BYTES="0",
        TRANSCRIBER_RECOGNIZER_DIARIZATION="on",
        TRANSCRIBER_RECOGNIZER_MODELS_DIR=str(tmp_path / "models"),
        TRANSCRIBER_RECOGNIZER_ROUTES='{"ru": "gigaam-v3"}')
    try:
        wait_ready(port, proc, timeout=120)
        time.sleep(IDLE_SECONDS)  # idle: nothing to do, nothing sent
        audio = FIXTURES / "two_speakers.mp3"
        card = asyncio.run(_transcribe(port, audio.name, audio.read_bytes()))
        russian = FIXTURES / "festival_ru.m4a"
        routed = asyncio.run(_transcribe(port, russian.name, russian.read_bytes(),
                                         "?language=ru"))
        time.sleep(AFTER_SECONDS)  # the telemetry came 10-30 s after the first session
    finally:
        _stop_traced(proc)
        output = proc.communicate(timeout=60)[0].decode()
    assert card["stage"] == "done"
    assert card["model"] == "whisper-base"
    assert (routed["model"], routed["transcript"]) == ("gigaam-v3", "привет")
    assert "Traceback" not in output
    trace = trace_file.read_text()
    assert "bind(" in trace  # strace saw the service's own sockets (its listening one)
    assert outbound(trace) == []
