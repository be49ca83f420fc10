"""What a writer command is: the `Command` base class and the `WriteContext` it runs in.

A command is a frozen, slotted, kw-only dataclass subclassing `Command[R]`; the
writer actor (`transcriber.db.writer`) runs its `execute` inside the open
transaction and answers its caller with the result. The connection a command
sees is either engine's (`Connection`): SQLite's `InlineConnection` or
PostgreSQL's `PgConnection`, both running named queries.
"""

from __future__ import annotations

import math
from collections.abc import Generator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import TracebackType
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from transcriber.core.clock import Clock, format_time
from transcriber.db.inline import Params

R_co = TypeVar("R_co", covariant=True)


class Cursor(Protocol):
    """A statement's result on either engine: rows read by column name."""

    @property
    def rowcount(self) -> int: ...

    async def fetchone(self) -> Any: ...

    async def fetchall(self) -> list[Any]: ...


class Executed(Protocol):
    """`await conn.execute(…)` or `async with conn.execute(…) as cursor`."""

    def __await__(self) -> Generator[Any, None, Cursor]: ...

    async def __aenter__(self) -> Cursor: ...

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


class Connection(Protocol):
    """The writer's connection as a command sees it: SQLite's `InlineConnection`
    or PostgreSQL's `PgConnection`, both running named queries."""

    @property
    def in_transaction(self) -> bool: ...

    def execute(self, sql: str, params: Params | None = None) -> Executed: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteContext:
    """What a command may use while it runs inside the writer's transaction.

    One context per transaction: `memo` holds what the commands of this one
    transaction may reuse (see `Claim`), and formatted times are kept per
    whole second (a stored time has second resolution), so a batch formats
    each distinct second once instead of once per statement.
    """

    conn: Connection
    clock: Clock
    memo: dict[str, object] = field(default_factory=dict)
    _stamps: dict[int, str] = field(default_factory=dict)

    def now(self, *, plus_seconds: float = 0) -> str:
        moment = self.clock.now()
        return self.format(moment + timedelta(seconds=plus_seconds) if plus_seconds else moment)

    def format(self, moment: datetime) -> str:
        """`clock.format_time(moment)`, formatted once per second of this transaction."""
        second = math.floor(moment.timestamp())  # exact: µs count over 1e6, correctly rounded
        text = self._stamps.get(second)
        if text is None:
            text = self._stamps[second] = format_time(moment)
        return text


class Command(Generic[R_co]):
    """Base of writer commands. Subclasses are frozen, slotted, kw-only dataclasses.

    `savepoint = False` declares that the command cannot fail after it wrote:
    at most one write statement, and nothing that can raise once it landed
    (SQLite undoes a failed statement by itself). Such a command skips the
    SAVEPOINT/RELEASE pair; if it fails having changed rows anyway, the
    writer fails the whole batch rather than commit half a command.

    `scrubs = True` declares a deletion whose bytes must leave the disk (a record, voice
    embeddings): once it committed, the writer checkpoints and truncates the WAL
    (`transcriber.db.scrub`).
    """

    __slots__ = ()
    name: ClassVar[str] = "command"
    savepoint: ClassVar[bool] = True
    scrubs: ClassVar[bool] = False

    async def execute(self, ctx: WriteContext) -> R_co:
        raise NotImplementedError
