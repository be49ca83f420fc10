"""Hostile input against a real `transcriber serve` over loopback.

A few hundred requests: random bytes as uploads, truncated and malformed
multipart bodies, empty files, a declared huge length followed by a hang-up,
file names with NUL, control characters, path traversal and 4 KB of
unicode, playlists and concat lists pointing at other files, a subtitle, an
image and a 1 Hz WAV (refused with 415), malformed ids, cursors, limits and
ranges, deeply wrong JSON and broken HTTP. Afterwards the service is
healthy, never answered 5xx, left no temporary or orphan file, and its
captured output names none of the files sent and holds no traceback.

Then hostile pages and connections: cross-site POSTs, a rebound Host name,
zero-byte, partial-header and stalled-body connections (closed by the
timeouts while /healthz and an ordinary upload keep working), descriptor
exhaustion (one structured event, no tracebacks) and a malformed bot token.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import random
import signal
import sqlite3
from pathlib import Path
from urllib.parse import quote

import aiohttp
import pytest

from tests.helpers import hostile_media as hm
from tests.helpers.processes import (
    free_port,
    start_server,
    start_server_with_descriptors,
    wait_ready,
)
from transcriber.db.connection import database_path
from transcriber.providers.local_files import RECORDS_DIR, TEMP_SUFFIX

AUDIO = (Path(__file__).resolve().parents[1] / "fixtures" / "audio" / "librivox_0880.mp3")
MARK = "HOSTILEMARK"  # in every name sent: it must never reach the output
NAMES = [
    f"../../../etc/passwd-{MARK}1.mp3",
    f"..\\..\\windows\\{MARK}2.mp3",
    f"/abs/{MARK}3.mp3",
    f"{MARK}4\x00.mp3",
    f"{MARK}5\x01\x1b[31m\r\nX-Injected: 1.mp3",
    f"{MARK}6-" + "ü" * 2048 + ".mp3",  # 4 KB of UTF-8
    f"{MARK}7 %00 %2e%2e%2f .mp3",
    f"{MARK}8.mp3\u202e\ufeff.exe",
]
BAD_IDS = ["x", "0" * 26, "01ARZ3NDEKTSV4RRFFQ69G5FA", "01arz3ndektsv4rrffq69g5favu",
           "Z" * 26, "%00", "..%2F..%2Fetc%2Fpasswd", "%C3%A9" * 13, "a" * 2000,
           "'%20OR%201=1--", "%FF%FE", "01arz3ndektsv4rrffq69g5fav%00"]


def _cursor(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


BAD_QUERIES = [
    "limit=-1", "limit=0", "limit=abc", "limit=" + "9" * 40, "limit=1e3", "limit=%00",
    "limit=١٢", "cursor=!!!", "cursor=" + "A" * 500, "cursor=%00", "cursor=" + _cursor(b"["),
    "cursor=" + _cursor(b"[" * 150), "cursor=" + _cursor(b'{"a":' * 30),
    "cursor=" + _cursor(b'["p","2020-01-01T00:00:00Z",["x"]]'),
    "cursor=" + _cursor(b'["p",1e999,"01arz3ndektsv4rrffq69g5fav"]'),
    "cursor=" + _cursor(b'["s",NaN,"01arz3ndektsv4rrffq69g5fav"]'),
    "cursor=" + _cursor(b"null"), "cursor=" + _cursor(b'"\\ud800"'),
    "cursor=" + _cursor(b"\xff\xfe\x00"),
    'q="', "q=NEAR(a", "q=%00", "q=" + "x" * 5000, "q=*", "q=a%20OR%20", "q=%22%22%22",
    "q=" + quote("ü" * 300), "q=title:x", "q=x&cursor=" + _cursor(b'["p","x","y"]'),
]


async def _raw(port: int, payload: bytes, *, read: bool = True) -> int | None:
    """Send bytes as they are; the answer's status (None: no answer, or not read)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(payload)
        await writer.drain()
        if not read:
            return None
        line = await asyncio.wait_for(reader.readline(), 10)
        parts = line.split()
        return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
    except (ConnectionError, TimeoutError):
        return None
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


def _multipart(filename: bytes, content: bytes, *, boundary: bytes = b"XyZ") -> bytes:
    return (b"--" + boundary + b"\r\nContent-Disposition: form-data; name=\"file\"; filename=\""
            + filename + b"\"\r\nContent-Type: application/octet-stream\r\n\r\n" + content
            + b"\r\n--" + boundary + b"--\r\n")


def _post(body: bytes, headers: dict[str, str], *, length: int | None = None) -> bytes:
    head = "".join(f"{key}: {value}\r\n" for key, value in headers.items())
    size = len(body) if length is None else length
    return (f"POST /app/audiorecords HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {size}\r\n"
            f"{head}Connection: close\r\n\r\n").encode() + body


async def _attack(port: int, audio: bytes, rng: random.Random) -> tuple[list[int], list[str]]:
    """Every hostile request; returns the statuses answered and the records made."""
    statuses: list[int] = []
    created: list[str] = []
    base = f"http://127.0.0.1:{port}"
    multipart = {"Content-Type": "multipart/form-data; boundary=XyZ"}
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:

        async def call(method: str, path: str, **kwargs: object) -> None:
            async with session.request(method, base + path, **kwargs) as resp:  # type: ignore[arg-type]
                statuses.append(resp.status)
                body = await resp.read()
                if resp.status == 201:
                    created.append(str(resp.headers["Location"]).rsplit("/", 1)[-1])
                assert b"Traceback" not in body

        for name in NAMES:  # real audio under hostile names: accepted, names cleaned
            await call("POST", "/app/audiorecords", data=audio,
                       headers={"X-Filename": quote(name)})
            raw_name = name.encode().replace(b'"', b"").replace(b"\r\n", b" ")
            status = await _raw(port, _post(_multipart(raw_name, audio), multipart))
            statuses.extend([status] if status is not None else [])
        for _ in range(40):  # random bytes, random sizes, as raw body and as a form
            junk = rng.randbytes(rng.randrange(1, 64 * 1024))
            await call("POST", "/app/audiorecords", data=junk,
                       headers={"X-Filename": f"{MARK}-junk.mp3"})
            status = await _raw(port, _post(_multipart(MARK.encode() + b".wav", junk),
                                            multipart))
            statuses.extend([status] if status is not None else [])
        # Media that makes ffmpeg read other files, or is no audio container (see also
        # test_hostile_media.py): refused as not audio whatever it is named.
        for content in (hm.hls_playlist(f"file://{AUDIO}"), hm.hls_playlist(str(AUDIO)),
                        hm.live_playlist(), hm.ffconcat(str(AUDIO)), hm.SUBTITLE, hm.png(),
                        hm.one_hertz_wav()):
            for name in (f"{MARK}.m3u8", f"{MARK}.mp3", f"{MARK}.ffconcat"):
                async with session.post(base + "/app/audiorecords", data=content,
                                        headers={"X-Filename": name}) as resp:
                    statuses.append(resp.status)
                    assert resp.status == 415, await resp.text()
        await call("POST", "/app/audiorecords", data=b"", headers={"X-Filename": f"{MARK}.mp3"})
        for body in (_multipart(b"empty.mp3", b""), b"--XyZ\r\n", b"--XyZ--\r\n", b"garbage",
                     b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nabc"):
            status = await _raw(port, _post(body, multipart))
            statuses.extend([status] if status is not None else [])
        for cut in (10, 100, 200, 5000, 15000):  # truncated: declared more, then hang up
            body = _multipart(f"{MARK}-cut.mp3".encode(), audio)
            await _raw(port, _post(body[:cut], multipart, length=len(body)), read=False)
            await _raw(port, _post(audio[:cut], {"X-Filename": MARK}, length=len(audio)),
                       read=False)
        for _ in range(5):  # a huge declared length: refused before reading
            status = await _raw(port, _post(b"x" * 100, {"X-Filename": MARK},
                                            length=10**13))
            statuses.extend([status] if status is not None else [])
            # A large but allowed length, a few bytes, then the client vanishes.
            await _raw(port, _post(audio[:1000], {"X-Filename": MARK}, length=7 * 1024**3),
                       read=False)
        json_body = b"[" * 100_000
        await call("POST", "/app/audiorecords", data=json_body,
                   headers={"Content-Type": "application/json", "X-Filename": MARK})
        for record_id in BAD_IDS:
            for suffix in ("", "/file", "/file?copy=../../x", "/transcript?format=%00"):
                await call("GET", f"/app/audiorecords/{record_id}{suffix}")
            await call("POST", f"/app/audiorecords/{record_id}/resume", data=json_body,
                       headers={"Content-Type": "application/json"})
        for query in BAD_QUERIES:
            await call("GET", f"/app/audiorecords?{query}")
        if created:
            record = f"/app/audiorecords/{created[0]}"
            for spec in ("bytes=99999999-", "bytes=-0", "bytes=5-1", "bytes=a-b", "pages=1-2",
                         "bytes=0-1,2-3,4-5", "bytes=" + "1" * 100 + "-"):
                await call("GET", f"{record}/file?copy=original", headers={"Range": spec})
            for query in ("copy=normalized", "copy=%00", "copy=" + "x" * 3000, "format=exe",
                          "format="):
                await call("GET", f"{record}/file?{query}")
                await call("GET", f"{record}/transcript?{query}")
            await call("POST", f"{record}/resume", data=b"{\"deep\": " * 5000,
                       headers={"Content-Type": "application/json"})
    for junk_request in (b"\x00\x01\x02\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n",
                         b"GET /app/me HTTP/1.1\r\nHost: 127.0.0.1\r\nX: " + b"a" * 20000
                         + b"\r\n\r\n",
                         b"GET /app/me HTTP/1.1\r\nBad Header\r\n\r\n",
                         b"POST /app/audiorecords HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         b"Transfer-Encoding: chunked\r\n\r\nzz\r\n"):
        status = await _raw(port, junk_request)
        statuses.extend([status] if status is not None else [])
    return statuses, created


def _files_and_rows(data_dir: Path) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    on_disk = {(path.parent.name, path.name)
               for path in (data_dir / RECORDS_DIR).glob("*/*") if path.is_file()}
    db = database_path(data_dir)
    with contextlib.closing(sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)) as conn:
        rows = set(conn.execute("SELECT record_id, file_name FROM files"))
    return on_disk, rows


def _named_after_input(folder: Path) -> list[Path]:
    """Paths anywhere under `folder` named after what was sent (traversal escapes)."""
    return [p for p in folder.rglob("*") if MARK in p.name or "passwd" in p.name]


def _records(data_dir: Path) -> dict[str, str]:
    db = database_path(data_dir)
    with contextlib.closing(sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)) as conn:
        return dict(conn.execute("SELECT id, original_filename FROM audio_records"))


@pytest.mark.slow
async def test_hostile_input_leaves_the_service_healthy_clean_and_quiet(
    data_dir: Path, tmp_path: Path
) -> None:
    port = free_port()
    proc = start_server(data_dir, port, TRANSCRIBER_SERVER_RATE_LIMIT_REQUESTS="100000")
    try:
        await asyncio.to_thread(wait_ready, port, proc)
        statuses, _ = await _attack(port, AUDIO.read_bytes(), random.Random(1))
        async with (aiohttp.ClientSession() as session,
                    session.get(f"http://127.0.0.1:{port}/healthz") as resp):
            assert resp.status == 200
        # The hung-up uploads clean up after themselves once the server sees the hang-up.
        for _ in range(100):
            on_disk, rows = await asyncio.to_thread(_files_and_rows, data_dir)
            if on_disk == rows:
                break
            await asyncio.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGTERM)
        output = (await asyncio.to_thread(proc.communicate, timeout=20))[0].decode(
            "utf-8", "replace")
    assert len(statuses) >= 200
    assert all(status < 500 for status in statuses), sorted(set(statuses))
    records = _records(data_dir)
    # Some hostile names are refused (400: a NUL in a form header, a 12 KB header).
    assert statuses.count(201) == len(records) >= len(NAMES)
    for name in records.values():  # kept for the owner, cleaned: no path, no controls
        assert "/" not in name
        assert "\\" not in name
        assert not any(ord(ch) < 32 for ch in name)
        assert len(name) <= 255
    assert not any(name.endswith(TEMP_SUFFIX) for _, name in on_disk)
    assert on_disk == rows, "a file without its row or a row without its file"
    assert {record_id for record_id, _ in rows} == set(records)
    assert await asyncio.to_thread(_named_after_input, tmp_path) == []
    assert [line for line in output.splitlines() if MARK in line] == []
    assert [line for line in output.splitlines() if "Traceback" in line] == []
    assert proc.returncode == 0, output[-2000:]


async def _hold(port: int, payload: bytes) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    if payload:
        writer.write(payload)
        await writer.drain()
    return reader, writer


async def _closed_by_server(reader: asyncio.StreamReader, within: float) -> bytes | None:
    """What the server sent before closing, or None when it kept the connection open."""
    try:
        return await asyncio.wait_for(reader.read(), within)
    except TimeoutError:
        return None
    except ConnectionError:
        return b""


def _stalled_upload(user: str) -> bytes:
    return (f"POST /app/audiorecords HTTP/1.1\r\nHost: 127.0.0.1\r\nRemote-User: {user}\r\n"
            f"X-Filename: {MARK}.mp3\r\nContent-Length: 100000000\r\n\r\n").encode() \
        + b"\0" * 1000


async def test_hostile_pages_and_stalled_connections_are_refused_and_closed(
    data_dir: Path,
) -> None:
    port = free_port()
    proc = start_server(data_dir, port, TRANSCRIBER_SERVER_HEADER_READ_TIMEOUT_SECONDS="1.5",
                        TRANSCRIBER_SERVER_UPLOAD_IDLE_SECONDS="1.5")
    base = f"http://127.0.0.1:{port}"
    audio = AUDIO.read_bytes()
    held: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    try:
        await asyncio.to_thread(wait_ready, port, proc)
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:
            for headers in ({"Origin": "https://evil.example", "Content-Type": "text/plain"},
                            {"Sec-Fetch-Site": "cross-site", "Content-Type": "text/plain"}):
                async with session.post(base + "/app/audiorecords", data=audio,
                                        headers=headers) as resp:
                    assert resp.status == 403
            form = aiohttp.FormData()
            form.add_field("file", audio, filename="a.mp3")
            async with session.post(base + "/app/audiorecords", data=form,
                                    headers={"Origin": "https://evil.example",
                                             "Sec-Fetch-Site": "cross-site"}) as resp:
                assert resp.status == 403
            async with session.get(base + "/app/audiorecords",
                                   headers={"Host": "rebind.evil.example"}) as resp:
                assert resp.status == 421
            assert _records(data_dir) == {}
            zero = [await _hold(port, b"") for _ in range(30)]
            partial = [await _hold(port, b"GET /app/me HTTP/1.1\r\nHost: 127.0.0.1\r\nX-S")
                       for _ in range(30)]
            stalled = [await _hold(port, _stalled_upload(f"user{n}")) for n in range(5)]
            held = zero + partial + stalled
            # Throughout, the service answers and accepts an ordinary upload.
            async with session.get(base + "/healthz") as resp:
                assert resp.status == 200
            async with session.post(base + "/app/audiorecords", data=audio,
                                    headers={"X-Filename": "ordinary.mp3"}) as resp:
                assert resp.status == 201
            endings = await asyncio.gather(*(_closed_by_server(reader, 10)
                                             for reader, _ in held))
            assert all(ending is not None for ending in endings), "a connection stayed open"
            assert all(ending == b"" for ending in endings[:60])  # closed, nothing said
            assert all(ending is not None and ending.startswith(b"HTTP/1.1 408")
                       for ending in endings[60:])
            async with session.get(base + "/healthz") as resp:
                assert resp.status == 200
        on_disk, rows = await asyncio.to_thread(_files_and_rows, data_dir)
    finally:
        for _, writer in held:
            writer.close()
        proc.send_signal(signal.SIGTERM)
        output = (await asyncio.to_thread(proc.communicate, timeout=20))[0].decode(
            "utf-8", "replace")
    assert len(_records(data_dir)) == 1
    assert on_disk == rows
    assert "Traceback" not in output
    assert MARK not in output


async def test_descriptor_exhaustion_is_one_event_and_the_service_recovers(
    data_dir: Path,
) -> None:
    port = free_port()
    # At most 96 descriptors (the attack at 256, scaled).
    proc = start_server_with_descriptors(
        data_dir, port, 96, TRANSCRIBER_SERVER_HEADER_READ_TIMEOUT_SECONDS="3")
    held: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    try:
        await asyncio.to_thread(wait_ready, port, proc)
        for _ in range(150):  # more than the server's descriptors allow
            with contextlib.suppress(OSError):
                held.append(await _hold(port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"))
        await asyncio.sleep(2.5)  # asyncio retries accept() every second meanwhile
        await asyncio.gather(*(_closed_by_server(reader, 10) for reader, _ in held))
        for _ in range(100):  # the header timeout freed the descriptors
            with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                async with (aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=2))
                            as session, session.get(f"http://127.0.0.1:{port}/healthz")
                            as resp):
                    if resp.status == 200:
                        break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError("/healthz did not recover")
    finally:
        for _, writer in held:
            writer.close()
        proc.send_signal(signal.SIGTERM)
        output = (await asyncio.to_thread(proc.communicate, timeout=20))[0].decode(
            "utf-8", "replace")
    events = [line for line in output.splitlines() if "accept_failed" in line]
    assert 1 <= len(events) <= 2, output[-3000:]
    assert "Traceback" not in output
    assert "out of system resource" not in output


def test_a_malformed_bot_token_exits_2_with_one_line(data_dir: Path) -> None:
    proc = start_server(data_dir, free_port(), TRANSCRIBER_TELEGRAM_TOKEN="not-a-token-SECRET")
    output = proc.communicate(timeout=30)[0].decode()
    assert proc.returncode == 2, output
    assert output.strip().splitlines() == [
        "transcriber: bad setting telegram.token: is not a bot token "
        "(digits, a colon, the secret)"]
