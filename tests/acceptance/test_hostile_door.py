"""Hostile input round 4 against a real `transcriber serve` over loopback
(docs/hostile-input.md): one person's many tokens share one rate budget, a head
with `Expect: 100-continue` and no identity learns nothing of the free disk, and
private answers tell caches not to keep them."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import aiohttp

from tests.helpers.processes import free_port, start_server, wait_ready

BUDGET = 12


def _token(data_dir: Path, login: str) -> str:
    environment = {**os.environ, "TRANSCRIBER_STORAGE_DATA_DIR": str(data_dir)}
    made = subprocess.run([sys.executable, "-m", "transcriber.cli", "token", "create", login],
                          env=environment, capture_output=True, text=True, timeout=120,
                          check=False)
    assert made.returncode == 0, made.stderr
    return made.stdout.strip()


async def _head_answer(port: int, head: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(head)
        await writer.drain()
        return await asyncio.wait_for(reader.read(65536), timeout=10)
    finally:
        writer.close()


def _expecting(length: int, *extra: str) -> bytes:
    lines = ["POST /app/audiorecords HTTP/1.1", "Host: 127.0.0.1", "Expect: 100-continue",
             "Content-Type: application/octet-stream", f"Content-Length: {length}",
             "X-Filename: a.wav", *extra]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def test_the_door_holds_against_round_4(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    tokens = [_token(data_dir, "alice") for _ in range(4)]
    proc = start_server(data_dir, port, TRANSCRIBER_SERVER_ANONYMOUS_USER="",
                        TRANSCRIBER_SERVER_RATE_LIMIT_REQUESTS=str(BUDGET),
                        TRANSCRIBER_SERVER_UPLOAD_MAX_BYTES=str(10**18))
    try:
        await asyncio.to_thread(wait_ready, port, proc)
        # No identity: the size and room checks are not reached, 100 Continue not sent.
        for length in (10**15, 10**9, 10**6):
            answer = await _head_answer(port, _expecting(length))
            assert answer.startswith(b"HTTP/1.1 401"), answer[:60]
            assert b"100 Continue" not in answer
        answer = await _head_answer(port, _expecting(10**15, "Remote-User: alice"))
        assert answer.startswith(b"HTTP/1.1 507"), answer[:60]
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:
            statuses = []
            for n in range(3 * BUDGET):
                headers = {"Authorization": f"Bearer {tokens[n % len(tokens)]}"}
                async with session.get(base + "/app/me", headers=headers) as resp:
                    statuses.append(resp.status)
                    if resp.status == 200:
                        assert resp.headers["Cache-Control"] == "no-store"
                        assert "Authorization" in resp.headers["Vary"]
            # One budget for alice's four tokens (it was four budgets: 48 answers).
            assert statuses.count(200) <= BUDGET + 3  # the refill of a few seconds at most
            assert statuses[-1] == 429
    finally:
        proc.send_signal(signal.SIGTERM)
        output = (await asyncio.to_thread(proc.communicate, timeout=20))[0].decode(
            "utf-8", "replace")
    assert "Traceback" not in output
