"""Hostile media against a real `transcriber serve` over loopback (issue 8, points 1–3).

One person's upload must never read another person's recording: HLS
playlists pointing at another user's original (by relative path, by
`file://`), an ffconcat list, a subtitle and an image are refused with 415
and nothing is stored. Live playlists (reloaded forever by ffmpeg's HLS
demuxer) must not wedge anything: while several arrive, ordinary uploads
and Telegram updates keep being taken. Audio sampled at 1 Hz (a header
declaring 27.8 h in 100 KB) and audio over `server.record_max_seconds`
are refused too.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sqlite3
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import quote

import aiohttp
import pytest

from tests.helpers import hostile_media as hm
from tests.helpers.processes import free_port, start_server, wait_ready
from tests.helpers.texts import T, en
from transcriber.db.connection import database_path
from transcriber.providers.local_files import RECORDS_DIR, TEMP_SUFFIX
from transcriber.testing.fake_telegram import FakeTelegram

ALICE_TG = 111
MAX_SECONDS = 4  # lowered so that "too long" costs a few KB
# HLS takes MP3 segments ("packed audio"): the victim's original is an MP3 (about 3 s).
VICTIM = Path(__file__).resolve().parents[1] / "fixtures" / "audio" / "librivox_0880.mp3"
LIVE_PLAYLISTS = 8  # more than asyncio's default thread pool has threads on a small machine


@pytest.fixture
async def fake_tg() -> AsyncIterator[FakeTelegram]:
    fake = FakeTelegram()
    await fake.start()
    yield fake
    await fake.stop()


@contextlib.asynccontextmanager
async def _serve(data_dir: Path, fake_tg: FakeTelegram) -> AsyncIterator[tuple[str, list[str]]]:
    port = free_port()
    proc = start_server(
        data_dir, port,
        TRANSCRIBER_SERVER_RECORD_MAX_SECONDS=str(MAX_SECONDS),
        TRANSCRIBER_SERVER_RATE_LIMIT_REQUESTS="100000",
        # One anonymous user sends every upload at once: room for all of them.
        TRANSCRIBER_SERVER_UPLOADS_MAX="32",
        TRANSCRIBER_SERVER_UPLOADS_PER_USER_MAX="32",
        TRANSCRIBER_TELEGRAM_TOKEN=fake_tg.token,
        TRANSCRIBER_TELEGRAM_API_BASE=fake_tg.base_url,
        TRANSCRIBER_TELEGRAM_ALLOWED=f'{{"{ALICE_TG}": "alice"}}',
        TRANSCRIBER_TELEGRAM_POLL_TIMEOUT_SECONDS="1",
    )
    output: list[str] = []
    try:
        await asyncio.to_thread(wait_ready, port, proc)
        yield f"http://127.0.0.1:{port}", output
        proc.send_signal(signal.SIGTERM)
        text = (await asyncio.to_thread(proc.communicate, None, 30))[0].decode()
        output.append(text)
        assert proc.returncode == 0, text[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                await asyncio.to_thread(proc.communicate, None, 10)


async def _post(session: aiohttp.ClientSession, base: str, user: str, name: str,
                content: bytes) -> tuple[int, dict[str, object]]:
    async with session.post(f"{base}/app/audiorecords", data=content,
                            headers={"Remote-User": user, "X-Filename": quote(name)}) as resp:
        return resp.status, await resp.json()


def _rows(data_dir: Path, sql: str) -> list[tuple[object, ...]]:
    db = database_path(data_dir)
    with contextlib.closing(sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)) as conn:
        return list(conn.execute(sql))


def _stored(data_dir: Path) -> list[Path]:
    return sorted(p for p in (data_dir / RECORDS_DIR).rglob("*") if p.is_file())


async def test_hostile_media_is_refused_and_never_reads_another_users_recording(
    data_dir: Path, fake_tg: FakeTelegram
) -> None:
    timeout = aiohttp.ClientTimeout(total=30)
    async with _serve(data_dir, fake_tg) as (base, _), aiohttp.ClientSession(
            timeout=timeout) as session:
        status, victim = await _post(session, base, "victim", "private.mp3",
                                     await asyncio.to_thread(VICTIM.read_bytes))
        assert status == 201, victim
        (original,) = await asyncio.to_thread(_stored, data_dir)
        assert original.parent.name == victim["id"]
        assert original.suffix == ".mp3"
        assert original.stem != victim["id"]
        relative = f"../{original.parent.name}/{original.name}"
        attacks = {
            "evil.m3u8": hm.hls_playlist(relative),
            "evil-url.m3u8": hm.hls_playlist(f"file://{original}"),
            "evil-abs.mp3": hm.hls_playlist(str(original)),
            "list.ffconcat": hm.ffconcat(str(original)),
            "relative.ffconcat": hm.ffconcat(relative),
            "subtitles.srt": hm.SUBTITLE,
            "cover.png": hm.png(),
        }
        for name, content in attacks.items():
            status, body = await _post(session, base, "mallory", name, content)
            assert status == 415, (name, body)
            assert body["error"]["code"] == "not_audio"  # type: ignore[index]
        status, body = await _post(session, base, "mallory", "slow.wav", hm.one_hertz_wav())
        assert (status, body["error"]["code"]) == (415, "sample_rate_too_low")  # type: ignore[index]
        status, body = await _post(session, base, "mallory", "long.wav",
                                   hm.wav(seconds=MAX_SECONDS + 1))
        assert (status, body["error"]["code"]) == (413, "too_long")  # type: ignore[index]
        async with session.get(f"{base}/app/audiorecords",
                               headers={"Remote-User": "mallory"}) as resp:
            assert (await resp.json())["items"] == []
    assert await asyncio.to_thread(_stored, data_dir) == [original]
    assert _rows(data_dir, "SELECT count(*) FROM audio_records") == [(1,)]
    assert _rows(data_dir, "SELECT count(*) FROM files") == [(1,)]


async def test_live_playlists_do_not_wedge_uploads_or_the_telegram_door(
    data_dir: Path, fake_tg: FakeTelegram
) -> None:
    timeout = aiohttp.ClientTimeout(total=20)
    async with _serve(data_dir, fake_tg) as (base, output), aiohttp.ClientSession(
            timeout=timeout) as session:
        live = hm.live_playlist()
        # The door gets a live playlist first, then ordinary voice notes behind it.
        playlist_file = fake_tg.add_file(live, folder="documents", ext=".m3u8")
        fake_tg.push_document(sender_id=ALICE_TG, file_id=playlist_file, file_name="live.m3u8",
                              mime_type="audio/x-mpegurl")
        for _ in range(5):
            fake_tg.push_voice(sender_id=ALICE_TG, file_id=fake_tg.add_file(hm.wav(seconds=1)))
        hostile = [asyncio.create_task(_post(session, base, "mallory", f"live{i}.m3u8", live))
                   for i in range(LIVE_PLAYLISTS)]
        ordinary = [await _post(session, base, "alice", f"talk{i}.wav", hm.wav(seconds=1))
                    for i in range(3)]
        assert [status for status, _ in ordinary] == [201, 201, 201]
        assert [status for status, _ in await asyncio.gather(*hostile)] == [415] * LIVE_PLAYLISTS
        async with asyncio.timeout(30):
            answers = await fake_tg.wait_sent(6)
        assert [a.text for a in answers] == [en(T.NOT_READABLE)] + [en(T.ACCEPTED)] * 5
        async with session.get(f"{base}/healthz") as resp:
            assert resp.status == 200
    stored = await asyncio.to_thread(_stored, data_dir)
    assert not [p for p in stored if p.name.endswith(TEMP_SUFFIX)]
    assert len(stored) == 3 + 5
    assert _rows(data_dir, "SELECT count(*) FROM audio_records") == [(8,)]
    assert "Traceback" not in output[0]
