"""Hostile request bodies against a real `transcriber serve` over loopback.

Compression bombs and oversized bodies on the JSON routes (for a record that
does not exist) and as uploads: refused, and the server's peak memory stays
where it was. Many trickling PATCHes under a low descriptor limit: the
body slots fill, ordinary requests are still answered. A silent PATCH is cut
by the idle limit, and clients that hang up mid-body are 499 at info, never
a 5xx or an error line.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import re
import signal
import subprocess
from collections.abc import Awaitable
from pathlib import Path

import aiohttp

from tests.helpers.processes import (
    free_port,
    start_server,
    start_server_with_descriptors,
    wait_ready,
)
from transcriber.providers.local_files import RECORDS_DIR

AUDIO = (Path(__file__).resolve().parents[1] / "fixtures" / "audio" / "librivox_0880.mp3")
ABSENT = "01arz3ndektsv4rrffq69g5fav"  # well-formed, no such record
JSON_ROUTES = [("PATCH", f"/app/audiorecords/{ABSENT}"),
               ("PATCH", f"/app/audiorecords/{ABSENT}/transcript"),
               ("POST", f"/app/audiorecords/{ABSENT}/retranscribe")]
MIB = 1024**2


def _peak_rss(proc: subprocess.Popen[bytes]) -> int:
    """The server process's peak resident memory so far (VmHWM), in bytes."""
    status = Path(f"/proc/{proc.pid}/status").read_text()
    match = re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE)
    assert match is not None
    return int(match.group(1)) * 1024


def _head(method: str, path: str, *extra: str, length: int | None = None) -> bytes:
    size = "Transfer-Encoding: chunked" if length is None else f"Content-Length: {length}"
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", *extra, size]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def _send(port: int, head: bytes, chunks: list[bytes], *,
                answer: bool = True) -> bytes:
    """The head, then the body (chunked when the head says so) for as long as the
    server reads it; what the server answered before closing."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    chunked = b"chunked" in head

    async def body() -> None:
        with contextlib.suppress(ConnectionError):
            for chunk in chunks:
                writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
                await writer.drain()
            if chunked:
                writer.write(b"0\r\n\r\n")
                await writer.drain()

    writer.write(head)
    sending = asyncio.create_task(body())
    try:
        if not answer:
            await sending
            return b""
        with contextlib.suppress(ConnectionError):
            return await asyncio.wait_for(reader.read(), 15)
        return b""
    finally:
        sending.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sending
        writer.close()


def _form(part_headers: bytes, content: bytes) -> bytes:
    return (b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.mp3\"\r\n"
            + part_headers + b"\r\n" + content + b"\r\n--XyZ--\r\n")


async def test_bombs_and_oversized_bodies_are_refused_and_memory_stays_flat(
    data_dir: Path,
) -> None:
    port = free_port()
    proc = start_server(data_dir, port, TRANSCRIBER_SERVER_RATE_LIMIT_REQUESTS="100000")
    bomb = gzip.compress(b"[" + b" " * (256 * MIB) + b"]", compresslevel=9)  # ~250 KB
    statuses: list[bytes] = []
    try:
        await asyncio.to_thread(wait_ready, port, proc)
        async with (aiohttp.ClientSession() as session,  # warm: the first edit
                    session.patch(f"http://127.0.0.1:{port}{JSON_ROUTES[0][1]}",
                                  json={"title": "x"}) as resp):
            assert resp.status == 404
        before = _peak_rss(proc)
        pieces = [bomb[i:i + 16384] for i in range(0, len(bomb), 16384)]
        json = "Content-Type: application/json"
        for method, path in JSON_ROUTES:
            for head in (_head(method, path, json, "Content-Encoding: gzip",
                               length=len(bomb)),
                         _head(method, path, json, "Content-Encoding: gzip")):
                statuses.append((await _send(port, head, pieces))[:12])
            # Plain, undeclared, endless: cut at the cap.
            statuses.append((await _send(port, _head(method, path, json),
                                         [b" " * 65536] * 512))[:12])
        upload = ["X-Filename: bomb.mp3", "Content-Type: application/octet-stream"]
        form = "Content-Type: multipart/form-data; boundary=XyZ"
        for head, body in (
            (_head("POST", "/app/audiorecords", *upload, "Content-Encoding: gzip"), bomb),
            (_head("POST", "/app/audiorecords", form, "Content-Encoding: gzip"),
             _form(b"", bomb)),
            (_head("POST", "/app/audiorecords", form),
             _form(b"Content-Encoding: gzip\r\n", bomb)),
        ):
            statuses.append((await _send(port, head, [body[i:i + 16384] for i in
                                                      range(0, len(body), 16384)]))[:12])
        grown = _peak_rss(proc) - before
        async with (aiohttp.ClientSession() as session,
                    session.get(f"http://127.0.0.1:{port}/healthz") as resp):
            assert resp.status == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        output = (await asyncio.to_thread(proc.communicate, timeout=20))[0].decode(
            "utf-8", "replace")
    assert statuses == [b"HTTP/1.1 415"] * 2 + [b"HTTP/1.1 413"] + [b"HTTP/1.1 415"] * 2 \
        + [b"HTTP/1.1 413"] + [b"HTTP/1.1 415"] * 2 + [b"HTTP/1.1 413"] \
        + [b"HTTP/1.1 415"] * 3, statuses
    # 256 MiB behind each bomb, 32 MiB in each endless body: none of it was held.
    assert grown < 32 * MIB, f"the server grew by {grown / MIB:.0f} MiB"
    assert list((data_dir / RECORDS_DIR).glob("*/*")) == []
    assert "Traceback" not in output
    assert '"level": "error"' not in output, output[-3000:]


async def test_trickling_patches_under_few_descriptors_leave_reads_answered(
    data_dir: Path,
) -> None:
    port = free_port()
    # 19 descriptors when idle; 32 body slots (the default) leave room for others.
    proc = start_server_with_descriptors(data_dir, port, 80,
                                         TRANSCRIBER_SERVER_RATE_LIMIT_REQUESTS="100000")
    held: list[asyncio.StreamWriter] = []
    stop = asyncio.Event()

    async def trickle(writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while not stop.is_set():
                writer.write(b" ")  # one byte each half second: never idle
                await writer.drain()
                await asyncio.sleep(0.5)

    tasks: list[Awaitable[None]] = []
    try:
        await asyncio.to_thread(wait_ready, port, proc)
        head = _head("PATCH", JSON_ROUTES[0][1], "Content-Type: application/json",
                     length=60_000) + b'{"title": "'
        for _ in range(150):
            with contextlib.suppress(OSError, TimeoutError):
                _, writer = await asyncio.wait_for(
                    asyncio.open_connection("127.0.0.1", port), 2)
                writer.write(head)
                held.append(writer)
                tasks.append(asyncio.create_task(trickle(writer)))
        answered, busy = False, False
        for _ in range(60):  # 30 s at most; the idle limit (60 s) cuts nothing meanwhile
            with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                async with aiohttp.ClientSession(
                        timeout=aiohttp.ClientTimeout(total=2)) as session:
                    async with session.get(f"http://127.0.0.1:{port}/app/me") as resp:
                        answered = resp.status == 200
                    # The trickling bodies still hold every slot.
                    async with session.patch(f"http://127.0.0.1:{port}{JSON_ROUTES[0][1]}",
                                             json={"title": "x"}) as resp:
                        busy = resp.status == 503 and resp.headers["Retry-After"] == "30"
            if answered and busy:
                break
            await asyncio.sleep(0.5)
    finally:
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        for writer in held:
            writer.close()
        proc.send_signal(signal.SIGTERM)
        output = (await asyncio.to_thread(proc.communicate, timeout=20))[0].decode(
            "utf-8", "replace")
    assert answered, "an ordinary request was not answered"
    assert busy, "the trickling PATCHes did not fill the body slots"
    assert "Traceback" not in output


def _counts(metrics: str, route: str) -> dict[str, float]:
    pattern = re.compile(r'^transcriber_http_requests_total\{route="' + re.escape(route)
                         + r'",status="(\d+)"\} (\S+)$', re.MULTILINE)
    return {status: float(value) for status, value in pattern.findall(metrics)}


async def test_a_silent_patch_is_cut_and_hang_ups_are_499_at_info(data_dir: Path) -> None:
    port = free_port()
    proc = start_server(data_dir, port, TRANSCRIBER_SERVER_UPLOAD_IDLE_SECONDS="1.5")
    json = "Content-Type: application/json"
    try:
        await asyncio.to_thread(wait_ready, port, proc)
        silent = await _send(port, _head("PATCH", JSON_ROUTES[0][1], json, length=100),
                             [b'{"title": '])
        # Gone mid-body: a JSON body, a raw upload, a form before its file part.
        form = "Content-Type: multipart/form-data; boundary=XyZ"
        for head, body in (
            (_head("PATCH", JSON_ROUTES[0][1], json, length=1000), b'{"title": "cut'),
            (_head("POST", "/app/audiorecords", "X-Filename: a.mp3", length=10**6),
             AUDIO.read_bytes()[:20_000]),
            (_head("POST", "/app/audiorecords", form, length=10**6),
             b"--XyZ\r\nContent-Disposition: form-da"),
        ):
            await _send(port, head, [body], answer=False)
        async with aiohttp.ClientSession() as session:
            for _ in range(100):  # until the handlers have ended (the 408 lingers 1 s)
                async with session.get(f"http://127.0.0.1:{port}/metrics") as resp:
                    metrics = await resp.text()
                if sum(_counts(metrics, "/app/audiorecords/{id}").values()) \
                        + sum(_counts(metrics, "/app/audiorecords").values()) >= 4:
                    break
                await asyncio.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGTERM)
        output = (await asyncio.to_thread(proc.communicate, timeout=20))[0].decode(
            "utf-8", "replace")
    assert silent.startswith(b"HTTP/1.1 408"), silent[:200]
    assert b'"body_too_slow"' in silent
    assert _counts(metrics, "/app/audiorecords/{id}") == {"408": 1.0, "499": 1.0}
    assert _counts(metrics, "/app/audiorecords") == {"499": 2.0}
    gone = [line for line in output.splitlines() if '"http_client_gone"' in line]
    assert len(gone) == 3, output[-3000:]
    assert all('"level": "info"' in line and '"status": 499' in line for line in gone)
    assert '"level": "error"' not in output, output[-3000:]
    assert "Traceback" not in output
    assert list((data_dir / RECORDS_DIR).glob("*/*")) == []
