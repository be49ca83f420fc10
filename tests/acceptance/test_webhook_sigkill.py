"""Webhook deliveries across a SIGKILL, then through two failures, with a real
`serve` process.

`serve` (fake steps, `webhooks.allow_private_targets` on) sends to a receiver
on 127.0.0.1 in this test's loop, which checks every signature. The record
reaches `done` moments after the start, so its delivery is written with it;
the receiver kills the process with SIGKILL when the first attempt arrives,
before answering: the delivery is due and pending. After a restart the
receiver answers 500 twice, then 200: three recorded attempts (1 s and 2 s
apart), all under the same delivery id with the same body — the body the cut
try wrote to the row before it was sent, not a newer card (the record's
description may land between the kill and the restart). No assertion leans on
time: the waits are for events (a POST received, a row's state, the process's
exit), with bounds only as a last resort, and "nothing more is sent" is checked
after `serve` has stopped. The restarted process is not polled for readiness
against a clock (a 30 s bound on a start that a busy machine slowed past it
failed this test once): its first POST is the sign it runs, and its exit
meanwhile fails the test at once, with its output.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sqlite3
import subprocess
from pathlib import Path

from tests.helpers.factories import make_record, make_user
from tests.helpers.pipeline import until
from tests.helpers.processes import free_port, start_server
from tests.helpers.webhooks import SECRET, Received, Receiver
from transcriber.core.clock import SystemClock
from transcriber.db.commands.webhooks import CreateWebhook
from transcriber.db.connection import database_path
from transcriber.db.migrate import migrate
from transcriber.db.writer import Writer

ENV = {
    "TRANSCRIBER_PIPELINE_WORKERS": "1",
    "TRANSCRIBER_PIPELINE_IDLE_SLEEP_SECONDS": "0.05",
    "TRANSCRIBER_WEBHOOKS_ALLOW_PRIVATE_TARGETS": "true",
    "TRANSCRIBER_WEBHOOKS_POLL_SECONDS": "0.2",
}


async def _record_with_a_webhook(data_dir: Path, url: str) -> str:
    """The owner's webhook and a record at its first stage, written before the start."""
    migrate(data_dir)
    writer = Writer(database_path(data_dir), clock=SystemClock())
    await writer.start()
    try:
        owner = await make_user(writer, login="local")
        await writer.ask(CreateWebhook(owner_id=owner.id, url=url, secret=SECRET,
                                       events=("record.done",), limit=10))
        return await make_record(writer, owner)
    finally:
        await writer.stop()


def _query(db: Path, sql: str) -> list[sqlite3.Row]:
    with contextlib.closing(sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)) as conn:
        conn.row_factory = sqlite3.Row
        return list(conn.execute(sql))


# The last-resort bound of every wait: generous, for a machine busy with other tests.
BOUND_SECONDS = 120


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.communicate(timeout=BOUND_SECONDS)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise


async def _while_running(proc: subprocess.Popen[bytes], count: int,
                         receiver: Receiver) -> list[Received]:
    """The receiver's first `count` POSTs; the process's exit first fails at once."""
    arrived = asyncio.ensure_future(receiver.wait_for(count, within=BOUND_SECONDS))
    exited = asyncio.ensure_future(asyncio.to_thread(proc.wait))
    try:
        await asyncio.wait([arrived, exited], return_when=asyncio.FIRST_COMPLETED)
        if not arrived.done():
            raise AssertionError(f"serve exited ({proc.returncode}) before {count} POSTs: "
                                 f"{proc.communicate()[0][-4000:]!r}")
        return arrived.result()
    finally:
        arrived.cancel()  # `exited` ends with the process (stopped below, in any case)


async def test_a_delivery_due_when_serve_is_killed_is_delivered_after_the_restart(
        data_dir: Path) -> None:
    # The first answer goes to the cut try (it reaches nobody); then 500, 500, 200.
    receiver = Receiver(answers=[500, 500, 500])
    url = await receiver.start()
    procs: list[subprocess.Popen[bytes]] = []

    async def kill_at_the_first_attempt(got: Received) -> None:
        if len(receiver.received) == 1:
            os.kill(procs[0].pid, signal.SIGKILL)  # before this attempt is answered
            await asyncio.to_thread(procs[0].wait, BOUND_SECONDS)  # the answer goes nowhere

    receiver.before_answer = kill_at_the_first_attempt
    try:
        record_id = await _record_with_a_webhook(data_dir, url)
        db = database_path(data_dir)
        procs.append(start_server(data_dir, free_port(), fake_steps="", **ENV))
        await _while_running(procs[0], 1, receiver)
        assert await asyncio.to_thread(procs[0].wait, BOUND_SECONDS) == -signal.SIGKILL
        [record] = _query(db, "SELECT state FROM audio_records")
        assert record["state"] == "done"
        [pending] = _query(db, "SELECT id, state, attempts, event, record_id "
                               "FROM webhook_deliveries")
        assert (pending["state"], pending["attempts"]) == ("pending", 0)
        assert (pending["event"], pending["record_id"]) == ("record.done", record_id)

        procs.append(start_server(data_dir, free_port(), fake_steps="", **ENV))
        got = await _while_running(procs[1], 4, receiver)
        await until(lambda: _query(db, "SELECT state FROM webhook_deliveries")[0]["state"]
                    == "delivered", within=BOUND_SECONDS)
        [delivered] = _query(db, "SELECT attempts, last_status, body FROM webhook_deliveries")
        assert (delivered["attempts"], delivered["last_status"]) == (3, 200)
        await asyncio.to_thread(_stop, procs.pop())  # whatever it would send, it has
        assert [r.delivery for r in got] == [pending["id"]] * 4
        assert all(r.signed for r in got)
        # The cut try wrote its body before sending; every retry resends those bytes.
        assert {r.body for r in got} == {bytes(delivered["body"])}
        assert got[3].payload()["record"]["id"] == record_id
        assert got[3].payload()["event"] == "record.done"
        assert len(receiver.received) == 4  # a delivered delivery is never sent again
    finally:
        for proc in procs:
            await asyncio.to_thread(_stop, proc)
        await receiver.stop()
