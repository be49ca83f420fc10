"""The outbox across a SIGKILL: `serve` is killed between the `done` commit and the
send of the reply; after the restart the reply arrives in the chat exactly once.

A real `serve` process (fake steps, the bot pointed at the fake Bot API on
loopback in this test's loop). The fake kills the process the moment the
reply's `sendMessage` arrives, before it answers: the record is `done` and its
outbox row committed, but nothing reached the chat. Real (short) times.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.helpers.factories import make_record, make_user
from tests.helpers.pipeline import until
from tests.helpers.processes import free_port, wait_ready
from tests.helpers.texts import T, en
from transcriber.core.clock import SystemClock
from transcriber.db.connection import database_path
from transcriber.db.migrate import migrate
from transcriber.db.writer import Writer
from transcriber.testing.fake_telegram import FakeTelegram

CHAT_ID = 111
SENDER_MESSAGE_ID = 4242


async def _telegram_record(data_dir: Path) -> str:
    migrate(data_dir)
    writer = Writer(database_path(data_dir), clock=SystemClock())
    await writer.start()
    try:
        return await make_record(writer, await make_user(writer), source="telegram",
                                 tg_chat_id=CHAT_ID, tg_message_id=SENDER_MESSAGE_ID)
    finally:
        await writer.stop()


def _query(db: Path, sql: str, *args: object) -> list[sqlite3.Row]:
    with contextlib.closing(sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)) as conn:
        conn.row_factory = sqlite3.Row
        return list(conn.execute(sql, args))


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
    proc.communicate(timeout=20)


async def test_a_reply_killed_between_done_and_send_arrives_once_after_restart(
    data_dir: Path,
) -> None:
    record_id = await _telegram_record(data_dir)
    db = database_path(data_dir)
    fake = FakeTelegram()
    await fake.start()
    reply = en(T.EMPTY_TRANSCRIPT)  # fake steps store no transcript text
    env = {
        "TRANSCRIBER_PIPELINE_WORKERS": "1",
        "TRANSCRIBER_PIPELINE_IDLE_SLEEP_SECONDS": "0.05",
        "TRANSCRIBER_TELEGRAM_TOKEN": fake.token,
        "TRANSCRIBER_TELEGRAM_API_BASE": fake.base_url,
        "TRANSCRIBER_TELEGRAM_ALLOWED": f'{{"{CHAT_ID}": "alice"}}',
        "TRANSCRIBER_TELEGRAM_POLL_TIMEOUT_SECONDS": "1",
        "TRANSCRIBER_TELEGRAM_DELIVERY_POLL_SECONDS": "0.2",
    }
    procs: list[subprocess.Popen[bytes]] = []
    killed = asyncio.Event()

    async def kill_at_the_send(method: str, params: dict[str, Any]) -> None:
        if method == "sendMessage" and params.get("text") == reply and not killed.is_set():
            procs[0].kill()  # SIGKILL: the reply is committed in the outbox, not yet sent
            killed.set()
            fake.drop_next("sendMessage")  # and its request gets no answer

    fake.before_call = kill_at_the_send
    try:
        port = free_port()
        procs.append(_serve_replying(data_dir, port, env))
        # The record reaches done within moments of the start, maybe before /readyz answers.
        async with asyncio.timeout(30):
            await killed.wait()
        await asyncio.to_thread(procs[0].communicate, timeout=10)
        [row] = _query(db, "SELECT state FROM audio_records WHERE id = ?", record_id)
        assert row["state"] == "done"
        [pending] = _query(db, "SELECT state, attempts FROM telegram_outbox")
        assert (pending["state"], pending["attempts"]) == ("pending", 0)
        assert fake.sent == []

        port = free_port()
        procs.append(_serve_replying(data_dir, port, env))
        await asyncio.to_thread(wait_ready, port, procs[1])
        async with asyncio.timeout(30):
            await fake.wait_sent(1)
        await until(lambda: _query(db, "SELECT state FROM telegram_outbox")[0]["state"]
                    == "sent", within=20)
        await asyncio.sleep(1.0)  # a second send would have come by now (poll is 0.2 s)
        assert [(m.text, m.chat_id, m.reply_to) for m in fake.sent] == [
            (reply, CHAT_ID, SENDER_MESSAGE_ID)]
        [sent] = _query(db, "SELECT state, tg_message_id FROM telegram_outbox")
        assert sent["tg_message_id"] == fake.sent[0].message_id
        tries = [p for m, p in fake.calls if m == "sendMessage" and p.get("text") == reply]
        assert len(tries) == 2  # the one cut by the kill, the one after the restart
    finally:
        for proc in procs:
            await asyncio.to_thread(_stop, proc)
        await fake.stop()


def _serve_replying(data_dir: Path, port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """`serve` with fake steps whose finish replies, as the real one (its log in a file)."""
    environment = {**os.environ, "TRANSCRIBER_STORAGE_DATA_DIR": str(data_dir),
                   "TRANSCRIBER_SERVER_PORT": str(port), **env}
    with (data_dir / f"serve-{port}.log").open("ab") as log_file:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.serve_with_fakes", "--steps", ""],
            env=environment, stdout=log_file, stderr=subprocess.STDOUT)
