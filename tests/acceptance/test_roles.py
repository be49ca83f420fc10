"""`transcriber serve --role all|web|worker` with real processes on one SQLite data folder.

- Two `all` processes: only one polls Telegram (each is pointed at a fake Bot API of
  its own, so the fake that hears `getUpdates` names the poller), and each duty has
  one holder; SIGKILL the poller and the other starts polling within the takeover
  time (`server.duty_poll_seconds`, short here: the kernel releases a dead
  process's flock at once).
- A `worker` answers `/healthz`, `/readyz` and `/metrics` and 404 for everything else.
- A `web` process accepts an upload and runs no step: the record stays `uploaded`
  until a worker starts beside it, which takes it to `done`.
Real (short) times: these are real processes.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import aiohttp
import orjson
import pytest

from tests.helpers.pipeline import until
from tests.helpers.processes import free_port, start_server, wait_ready
from transcriber.db.connection import database_path
from transcriber.testing.fake_telegram import FakeTelegram

AUDIO = Path(__file__).resolve().parents[1] / "fixtures" / "audio" / "librivox_0880.mp3"
DUTY_POLL_SECONDS = 0.5
CHAT_ID = 111


def _stop(proc: subprocess.Popen[bytes]) -> str:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    return proc.communicate(timeout=20)[0].decode()


async def _get(port: int, path: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as session, \
            session.get(f"http://127.0.0.1:{port}{path}") as resp:
        return resp.status, await resp.text()


def _polls(fake: FakeTelegram) -> int:
    return sum(1 for method, _ in fake.calls if method == "getUpdates")


def _held(metrics: str, duty: str) -> float:
    prefix = f'transcriber_duty_held{{duty="{duty}"}} '
    [line] = [line for line in metrics.splitlines() if line.startswith(prefix)]
    return float(line.removeprefix(prefix))


@pytest.mark.slow  # two processes with the bot start on a shared machine
async def test_one_of_two_processes_polls_telegram_and_the_other_takes_over_a_kill(
        data_dir: Path) -> None:
    fakes = [FakeTelegram(), FakeTelegram()]
    for fake in fakes:
        await fake.start()
    ports = [free_port(), free_port()]
    # Both start at once; whichever asks first holds the duties.
    procs = [start_server(data_dir, port, TRANSCRIBER_TELEGRAM_TOKEN=fake.token,
                          TRANSCRIBER_TELEGRAM_API_BASE=fake.base_url,
                          TRANSCRIBER_TELEGRAM_ALLOWED=f'{{"{CHAT_ID}": "alice"}}',
                          TRANSCRIBER_TELEGRAM_POLL_TIMEOUT_SECONDS="1",
                          TRANSCRIBER_SERVER_DUTY_POLL_SECONDS=str(DUTY_POLL_SECONDS))
             for fake, port in zip(fakes, ports, strict=True)]
    try:
        for port, proc in zip(ports, procs, strict=True):
            await asyncio.to_thread(wait_ready, port, proc)
        await until(lambda: _polls(fakes[0]) + _polls(fakes[1]) >= 2, within=15)
        holder = 0 if _polls(fakes[0]) else 1
        other = 1 - holder
        await asyncio.sleep(3 * DUTY_POLL_SECONDS)  # the other asked for the duty meanwhile
        assert fakes[other].calls == []  # not one call: no getMe, no poll, no status edit
        scrapes = [(await _get(port, "/metrics"))[1] for port in ports]
        # Each duty has one holder (both started at once: not always the same one).
        for duty in ("telegram-polling", "outbox", "sweeps", "describer"):
            assert sorted(_held(scrape, duty) for scrape in scrapes) == [0.0, 1.0], duty
        assert _held(scrapes[holder], "telegram-polling") == 1.0

        procs[holder].send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        await asyncio.to_thread(procs[holder].wait, 10)
        await until(lambda: _polls(fakes[other]) >= 1, within=15)
        took = time.monotonic() - killed_at
        assert took < 6, took  # an ask every 0.5 s (default 10 s), then getMe, setMyCommands
        _, metrics = await _get(ports[other], "/metrics")
        assert _held(metrics, "telegram-polling") == 1.0
        polled = _polls(fakes[holder])
        await asyncio.sleep(1.0)
        assert _polls(fakes[holder]) == polled  # the dead one, of course, polls no more
    finally:
        outputs = [await asyncio.to_thread(_stop, proc) for proc in procs]
        for fake in fakes:
            await fake.stop()
    assert "duty_taken" in outputs[other]


async def test_a_worker_answers_only_health_readiness_and_metrics(data_dir: Path) -> None:
    port = free_port()
    proc = start_server(data_dir, port, role="worker")
    try:
        await asyncio.to_thread(wait_ready, port, proc)
        assert (await _get(port, "/healthz"))[0] == 200
        assert (await _get(port, "/readyz"))[0] == 200
        status, metrics = await _get(port, "/metrics")
        assert status == 200
        assert _held(metrics, "describer") == 1.0  # alone, it describes
        assert 'transcriber_duty_held{duty="telegram-polling"}' not in metrics
        for path in ("/app/", "/app/audiorecords", "/", "/v1/models"):
            status, body = await _get(port, path)
            assert status == 404, path
            assert orjson.loads(body)["error"]["code"] == "not_found", path
    finally:
        output = await asyncio.to_thread(_stop, proc)
    [started] = [line for line in output.splitlines() if "serve_started" in line]
    assert orjson.loads(started)["role"] == "worker"


def _state(db: Path, record_id: str) -> str:
    with contextlib.closing(sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)) as conn:
        row = conn.execute("SELECT state FROM audio_records WHERE id = ?",
                           (record_id,)).fetchone()
    return str(row[0])


async def test_a_web_process_runs_no_step_until_a_worker_starts_beside_it(
        data_dir: Path) -> None:
    web_port, worker_port = free_port(), free_port()
    fast = {"TRANSCRIBER_PIPELINE_WORKERS": "2",
            "TRANSCRIBER_PIPELINE_IDLE_SLEEP_SECONDS": "0.05"}
    procs = [start_server(data_dir, web_port, fake_steps="", role="web", **fast)]
    db = database_path(data_dir)
    try:
        await asyncio.to_thread(wait_ready, web_port, procs[0])
        async with aiohttp.ClientSession() as session, session.post(
                f"http://127.0.0.1:{web_port}/app/audiorecords", data=AUDIO.read_bytes(),
                headers={"X-Filename": "talk.mp3"}) as resp:
            assert resp.status == 201, await resp.text()
            record_id = str(orjson.loads(await resp.read())["id"])
        await asyncio.sleep(1.0)  # two idle step actors would have taken it by now
        assert _state(db, record_id) == "uploaded"

        procs.append(start_server(data_dir, worker_port, fake_steps="", role="worker",
                                  **fast))
        await asyncio.to_thread(wait_ready, worker_port, procs[1])
        await until(lambda: _state(db, record_id) == "done", within=15)
        status, card = await _get(web_port, f"/app/audiorecords/{record_id}")
        assert status == 200
        assert orjson.loads(card)["stage"] == "done"
    finally:
        for proc in procs:
            await asyncio.to_thread(_stop, proc)
