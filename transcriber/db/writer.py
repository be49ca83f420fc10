"""The DB writer actor: the only write connection of the process.

Callers send typed commands (frozen dataclasses subclassing `Command[R]`) and
await the answer. The actor opens one transaction, then takes whatever is
queued (up to a batch size), runs each command in it, commits once (group
commit: one fsync for many commands), then answers each caller as if its
command had run alone. A failing command undoes only itself: a command that
may fail after a write runs inside its own SAVEPOINT; one that declares it
cannot (`Command.savepoint = False`: a single write, nothing fallible after
it) runs bare, and the writer checks the declaration when it fails.

A caller cancelled while waiting does not cancel its command: the envelope is
already in the mailbox when `ask` first awaits, and the actor runs every
envelope it takes; it only skips answering a reply nobody waits for. If the
actor dies, every waiting caller gets `WriterUnavailable` and `on_death` is
called so the service stops loudly.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, NamedTuple, TypeVar

import structlog

from transcriber.core.clock import Clock
from transcriber.core.errors import WriterUnavailable
from transcriber.core.observability import (
    WRITER_BATCH_SIZE,
    WRITER_COMMAND_SECONDS,
    WRITER_COMMANDS,
    WRITER_MAILBOX_DEPTH,
)
from transcriber.db import queries as q
from transcriber.db.command import Command, WriteContext
from transcriber.db.connection import open_sync
from transcriber.db.inline import InlineConnection
from transcriber.db.scrub import checkpoint_truncate

# `Command` and `WriteContext` live in `transcriber.db.command`; the commands
# import them from here, beside the actor that runs them.
__all__ = ["Command", "Envelope", "WriteContext", "Writer"]

log = structlog.get_logger(__name__)

# Turns of the loop the writer yields after BEGIN for answered callers' next
# commands; it stops early at a turn that brought none.
GATHER_TURNS = 3

R = TypeVar("R")


class Envelope(NamedTuple, Generic[R]):
    """A command in the mailbox, with the typed future that carries its answer.

    Immutable like every message, but a named tuple: it is the one object made
    per command on the writer's hottest path, and a tuple is built ~10× faster
    than a frozen dataclass (which sets each field through `object.__setattr__`).
    """

    command: Command[R]
    reply: asyncio.Future[R]
    enqueued_at: float


@dataclass(frozen=True, slots=True, kw_only=True)
class _Stop:
    """Drain everything queued before this, then close."""


class _HalfWritten(sqlite3.OperationalError):
    """A command declared without a savepoint failed after changing rows: the
    batch cannot be committed without half of it, so none of it is."""


def _fail(future: asyncio.Future[Any], error: BaseException) -> None:
    future.set_exception(error)
    # Marked as read: a caller cancelled just after the answer never reads it,
    # and asyncio would log "exception was never retrieved".
    future.exception()


class Writer:
    def __init__(
        self,
        path: Path,
        *,
        clock: Clock,
        busy_timeout_ms: int = 5000,
        batch_max: int = 64,
        on_death: Callable[[BaseException], None] | None = None,
    ) -> None:
        self._path = path
        self._clock = clock
        self._busy_timeout_ms = busy_timeout_ms
        self._batch_max = batch_max
        self._on_death = on_death
        # A deque and one wake-up future, not an asyncio.Queue: the actor is the
        # only reader, and a Queue's put/get bookkeeping (unfinished tasks, the
        # join event, waiter lists) is paid twice per command for nothing.
        self._mailbox: deque[Envelope[Any] | _Stop] = deque()
        self._wake: asyncio.Future[None] | None = None
        self._conn: InlineConnection | None = None
        # Its own thread for BEGIN (may wait on another process's lock) and
        # COMMIT (fsync), so busy default executors never delay a commit.
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="db-writer")
        self._task: asyncio.Task[None] | None = None
        self._accepting = False
        # A deletion committed whose WAL checkpoint has not completed yet.
        self._scrub_pending = False
        # The labelled metric children per command name, looked up once
        # (`labels()` takes a lock and builds a key on every call).
        self._metrics: dict[str, tuple[Any, Any, Any]] = {}
        # The connection waits for no lock (busy_timeout 0) except where the
        # writer waits on purpose, on its thread: BEGIN when another process
        # holds the write lock, and the scrub's checkpoint (see `_waiting`).
        self._no_busy_wait = q.control.PRAGMA_BUSY_TIMEOUT.format(milliseconds=0)
        self._busy_wait = q.control.PRAGMA_BUSY_TIMEOUT.format(milliseconds=int(busy_timeout_ms))

    @property
    def task(self) -> asyncio.Task[None] | None:
        return self._task

    @property
    def scrub_pending(self) -> bool:
        """A deletion's bytes may still be in the WAL (its checkpoint was kept short)."""
        return self._scrub_pending

    @property
    def mailbox_depth(self) -> int:
        return len(self._mailbox)

    async def _in_thread(self, func: Callable[[], object]) -> None:
        await asyncio.get_running_loop().run_in_executor(self._thread, func)

    async def start(self) -> None:
        def connect() -> sqlite3.Connection:
            raw = open_sync(self._path, busy_timeout_ms=self._busy_timeout_ms)
            raw.execute(self._no_busy_wait)
            return raw

        raw = await asyncio.get_running_loop().run_in_executor(self._thread, connect)
        self._conn = InlineConnection(raw)
        self._accepting = True
        self._task = asyncio.create_task(self._run(), name="db-writer")
        self._task.add_done_callback(self._task_done)

    async def stop(self) -> None:
        """Answer everything already queued, then close the connection."""
        if self._task is None:
            return
        self._accepting = False
        self._post(_Stop())
        await asyncio.wait({self._task})

    async def ask(self, command: Command[R]) -> R:
        # Not shielded: a cancelled caller cancels only its reply future; the
        # command is already queued and runs whole (the actor skips done replies).
        return await self.submit(command)

    def submit(self, command: Command[R]) -> asyncio.Future[R]:
        """Queue `command` now; its answer comes in the returned future (for a
        caller that must still read the answer after being cancelled)."""
        if not self._accepting:
            raise WriterUnavailable("the DB writer is not running")
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._post(Envelope(command, future, time.perf_counter()))
        return future

    def _post(self, item: Envelope[Any] | _Stop) -> None:
        self._mailbox.append(item)
        wake = self._wake
        if wake is not None:
            self._wake = None
            if not wake.done():
                wake.set_result(None)

    async def _next(self) -> Envelope[Any] | _Stop:
        """The oldest item of the mailbox, waiting for one if it is empty."""
        mailbox = self._mailbox
        while not mailbox:
            self._wake = asyncio.get_running_loop().create_future()
            await self._wake
        return mailbox.popleft()

    async def _run(self) -> None:
        try:
            stopping = False
            while not stopping:
                first = await self._next()
                if isinstance(first, _Stop):
                    break
                stopping = await self._run_batch(first)
        finally:
            await self._close()

    def _waiting(self, raw: sqlite3.Connection, statement: Callable[[], object]) -> None:
        """Run `statement` on the writer's thread with the configured busy_timeout."""
        raw.execute(self._busy_wait)
        try:
            statement()
        finally:
            raw.execute(self._no_busy_wait)

    def _begin_at_once(self, raw: sqlite3.Connection) -> bool:
        """BEGIN IMMEDIATE on the loop unless another connection holds the write
        lock: then False, and the caller waits for the lock on the writer's
        thread (busy_timeout). The usual case thus costs microseconds instead
        of a thread hop, which on a busy machine waits for a CPU and the GIL."""
        try:
            raw.execute(q.control.BEGIN_IMMEDIATE)
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY:
                raise
            return False
        return True

    async def _let_callers_in(self) -> None:
        """Yield a few turns of the loop while they still bring commands."""
        mailbox = self._mailbox
        depth = len(mailbox)
        for _ in range(GATHER_TURNS):
            if depth + 1 >= self._batch_max:
                return
            await asyncio.sleep(0)
            grown = len(mailbox)
            if grown == depth:
                return
            depth = grown

    def _take(self, first: Envelope[Any]) -> tuple[list[Envelope[Any]], bool]:
        """The batch: `first` and whatever is queued now; True when a stop was met."""
        batch: list[Envelope[Any]] = [first]
        mailbox = self._mailbox
        WRITER_MAILBOX_DEPTH.set(len(mailbox))
        while len(batch) < self._batch_max and mailbox:
            item = mailbox.popleft()
            if isinstance(item, _Stop):
                return batch, True
            batch.append(item)
        return batch, False

    async def _run_batch(self, first: Envelope[Any]) -> bool:
        conn = self._conn
        assert conn is not None
        raw = conn.raw
        outcomes: list[tuple[bool, Any]] = []
        batch, stopping = [first], False
        try:
            if not self._begin_at_once(raw):
                await self._in_thread(
                    lambda: self._waiting(raw, lambda: raw.execute(q.control.BEGIN_IMMEDIATE)))
            # The callers answered by the previous batch send their next
            # commands within a turn or two of the loop: taken after those
            # turns, they join this batch instead of waiting a whole commit.
            await self._let_callers_in()
            batch, stopping = self._take(first)
            outcomes = await self._execute_all(batch, WriteContext(conn=conn, clock=self._clock),
                                               raw)
            await self._in_thread(lambda: raw.execute(q.control.COMMIT))
        except sqlite3.OperationalError as exc:
            # The transaction itself failed (locked past busy_timeout, disk
            # full, I/O error) or cannot be kept: nothing of this batch is
            # stored, every caller hears so, and the actor goes on.
            self._rollback_quietly()
            log.error("writer_batch_failed", error=type(exc).__name__, size=len(batch))
            outcomes = [(False, exc)] * len(batch)
        except BaseException:
            self._rollback_quietly()
            self._answer_stopped(batch)
            raise
        if any(ok and envelope.command.scrubs
               for envelope, (ok, _) in zip(batch, outcomes, strict=True)):
            self._scrub_pending = True
        if self._scrub_pending:  # committed: now the deleted bytes leave the disk
            await self._scrub(raw)
        self._answer_batch(batch, outcomes)
        return stopping

    async def _scrub(self, raw: sqlite3.Connection) -> None:
        done = False

        def run() -> None:
            nonlocal done
            done = checkpoint_truncate(raw)

        # The checkpoint waits for readers up to busy_timeout, as it always did.
        await self._in_thread(lambda: self._waiting(raw, run))
        self._scrub_pending = not done

    @staticmethod
    async def _execute_all(
        batch: list[Envelope[Any]], ctx: WriteContext, raw: sqlite3.Connection
    ) -> list[tuple[bool, Any]]:
        """Run each command in the open transaction; a failure undoes only its command."""
        outcomes: list[tuple[bool, Any]] = []
        for envelope in batch:
            command = envelope.command
            if not command.savepoint:
                before = raw.total_changes
                try:
                    outcomes.append((True, await command.execute(ctx)))
                except Exception as exc:
                    if raw.total_changes != before:
                        raise _HalfWritten(f"{command.name} failed after a write") from exc
                    if not raw.in_transaction:
                        raise sqlite3.OperationalError("the transaction was rolled back") from exc
                    outcomes.append((False, exc))
                continue
            raw.execute(q.control.SAVEPOINT)
            try:
                result = await command.execute(ctx)
            except Exception as exc:
                raw.execute(q.control.ROLLBACK_TO_SAVEPOINT)
                raw.execute(q.control.RELEASE_SAVEPOINT)
                outcomes.append((False, exc))
                continue
            raw.execute(q.control.RELEASE_SAVEPOINT)
            outcomes.append((True, result))
        return outcomes

    def _answer_batch(self, batch: list[Envelope[Any]], outcomes: list[tuple[bool, Any]]) -> None:
        """Answer every caller of a batch. The batch is answered at one moment,
        and its counters move once per command name and outcome, not per command."""
        WRITER_BATCH_SIZE.observe(len(batch))
        answered_at = time.perf_counter()
        counts: Counter[tuple[str, bool]] = Counter()
        for envelope, (ok, value) in zip(batch, outcomes, strict=True):
            name = envelope.command.name
            counts[name, ok] += 1
            self._children(name)[0].observe(answered_at - envelope.enqueued_at)
            self._answer(envelope, ok, value)
        for (name, ok), count in counts.items():
            self._children(name)[1 if ok else 2].inc(count)

    def _answer_stopped(self, batch: list[Envelope[Any]]) -> None:
        """The actor is going away with this batch taken: its callers hear so (the
        mailbox's own waiters are answered by `_task_done`)."""
        stopped = WriterUnavailable("the DB writer stopped")
        self._answer_batch(batch, [(False, stopped)] * len(batch))

    def _children(self, name: str) -> tuple[Any, Any, Any]:
        """The command's latency histogram and ok / error counters."""
        children = self._metrics.get(name)
        if children is None:
            children = self._metrics[name] = (
                WRITER_COMMAND_SECONDS.labels(name), WRITER_COMMANDS.labels(name, "ok"),
                WRITER_COMMANDS.labels(name, "error"))
        return children

    def _answer(self, envelope: Envelope[Any], ok: bool, value: Any) -> None:
        reply = envelope.reply
        if reply.done():  # its caller was cancelled: nobody to answer
            return
        if ok:
            reply.set_result(value)
        else:
            _fail(reply, value)

    def _rollback_quietly(self) -> None:
        assert self._conn is not None
        try:
            if self._conn.in_transaction:
                self._conn.raw.execute(q.control.ROLLBACK)
        except Exception as exc:  # the connection itself may be gone
            log.error("writer_rollback_failed", error=type(exc).__name__)

    async def _close(self) -> None:
        self._accepting = False
        if self._conn is not None:
            raw = self._conn.raw
            self._conn = None
            if self._scrub_pending:
                await self._scrub(raw)
            await self._in_thread(raw.close)
        self._thread.shutdown(wait=False)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self._accepting = False
        error: BaseException = WriterUnavailable("the DB writer died")
        while self._mailbox:
            item = self._mailbox.popleft()
            if isinstance(item, Envelope) and not item.reply.done():
                _fail(item.reply, error)
        WRITER_MAILBOX_DEPTH.set(0)
        if task.cancelled():
            log.critical("writer_died", error="CancelledError")
            if self._on_death is not None:
                self._on_death(asyncio.CancelledError())
            return
        exc = task.exception()
        if exc is not None:
            log.critical("writer_died", error=type(exc).__name__)
            if self._on_death is not None:
                self._on_death(exc)
