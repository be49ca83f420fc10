"""Writer commands of the pipeline: claim, heartbeat, outcomes, halt, resume.

Every write by a claim holder is one statement conditional on its
acquisition token (P3); a token that no longer matches writes nothing and the
command raises `ClaimLost`. Only `Resume` (a person) writes without a token.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, ClassVar, Literal, Protocol

from transcriber.core.errors import ClaimLost, Conflict, NotFound, NoWork
from transcriber.core.ids import new_id
from transcriber.db import queries as q
from transcriber.db.inline import InlineConnection
from transcriber.db.writer import Command, WriteContext
from transcriber.domain.stages import HaltReason, Stage, spec_of, stage_of_step

Origin = Literal["pipeline", "human"]
EventOutcome = Literal["done", "failed", "halted", "resumed"]


class Effect(Protocol):
    """A write that lands together with a stage change, inside the writer
    (the pipeline's effects implement it: files rows, texts, a step's columns)."""

    async def apply(self, ctx: WriteContext, *, record_id: str, step: str) -> None:
        """Run the effect's statements; raise to roll the whole advance back."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Claimed:
    """A claim's answer: the record id and this claim's token, plus the queue
    bookkeeping the claimer needs to decide (never the record's content)."""

    record_id: str
    token: str
    stage: Stage
    attempts: int
    state_entered_at: str
    lease_taken_over: bool
    lease_expires_at: str


async def insert_event(
    ctx: WriteContext,
    *,
    record_id: str,
    origin: Origin,
    step: str,
    outcome: EventOutcome,
    outcome_text: str | None = None,
    duration_ms: int | None = None,
    actor_id: str | None = None,
) -> None:
    """One journal row (P15): stage change, halt or resume; never content. `actor_id`:
    the person who asked for it (None: the pipeline's own)."""
    await ctx.conn.execute(
        q.pipeline.INSERT_EVENT,
        {"id": new_id(), "record_id": record_id, "origin": origin, "step": step,
         "outcome": outcome, "outcome_text": outcome_text, "duration_ms": duration_ms,
         "now": ctx.now(), "actor_id": actor_id},
    )


async def holder_write(ctx: WriteContext, query: str, params: Mapping[str, object]) -> None:
    """One statement conditional on the holder's token (P3); `ClaimLost` if it did not land."""
    cursor = await ctx.conn.execute(query, params)
    if cursor.rowcount != 1:
        raise ClaimLost


_EMPTY_CLAIM = "claim.empty"  # WriteContext.memo: (now, total_changes) of an empty claim
_LEASES_MEMO = "claim.leases"  # WriteContext.memo: lease parameters by (now, lease table)
_LEASE_PARAMS = tuple((Stage(stage), q.pipeline.lease_param(stage))
                      for stage in q.pipeline.CLAIMABLE_STAGES)


@dataclass(frozen=True, slots=True, kw_only=True)
class Claim(Command["Claimed | NoWork"]):
    """Take the oldest eligible record (P2): one `UPDATE … RETURNING`.

    `leases` gives the lease of every claimable stage in seconds; the query
    picks the one of the record's own stage.
    """

    name: ClassVar[str] = "claim"
    # One write (the UPDATE); after it only a read of the same row, which
    # fails only with the database itself (the writer then fails the batch).
    savepoint: ClassVar[bool] = False
    leases: Mapping[Stage, float]

    async def execute(self, ctx: WriteContext) -> Claimed | NoWork:
        # One reading of the clock for the claim and every lease.
        moment = ctx.clock.now()
        now = ctx.format(moment)
        # Eligibility depends only on the rows and on `now` (whole seconds):
        # an empty claim stays empty for the same second while this
        # transaction, which holds the write lock, has changed no row since.
        conn = ctx.conn
        if not isinstance(conn, InlineConnection):  # PostgreSQL: other hosts claim too
            return await self._claim(ctx, moment, now)
        raw = conn.raw
        if ctx.memo.get(_EMPTY_CLAIM) == (now, raw.total_changes):
            return NoWork()
        params: dict[str, object] = {"token": new_id(), "now": now,
                                     **self._lease_params(ctx, moment, now)}
        # The raw connection (still inline, in the writer's transaction): the
        # hottest command skips the aiosqlite-shaped wrappers and their coroutines.
        row = raw.execute(q.pipeline.CLAIM, params).fetchone()
        if row is None:
            ctx.memo[_EMPTY_CLAIM] = (now, raw.total_changes)
            return NoWork()
        record_id: str = row["id"]
        state = raw.execute(
            q.pipeline.SELECT_CLAIMED, {"id": record_id, "token": row["acquisition_id"]}
        ).fetchone()
        assert state is not None, "the claimed row vanished inside its own command"
        return self._claimed(row, state)

    async def _claim(self, ctx: WriteContext, moment: datetime, now: str) -> Claimed | NoWork:
        """The claim through the engine-neutral connection (PostgreSQL: FOR UPDATE
        SKIP LOCKED, so claimers on other hosts pass over each other's rows). The
        memo of an empty queue holds within this transaction and second as on
        SQLite; a record another host commits meanwhile waits for the next claim."""
        changes = getattr(ctx.conn, "changes", None)
        if changes is not None and ctx.memo.get(_EMPTY_CLAIM) == (now, changes):
            return NoWork()
        params: dict[str, object] = {"token": new_id(), "now": now,
                                     **self._lease_params(ctx, moment, now)}
        row = await (await ctx.conn.execute(q.pipeline.CLAIM, params)).fetchone()
        if row is None:
            if changes is not None:
                ctx.memo[_EMPTY_CLAIM] = (now, changes)
            return NoWork()
        state = await (await ctx.conn.execute(
            q.pipeline.SELECT_CLAIMED, {"id": row["id"], "token": row["acquisition_id"]},
        )).fetchone()
        assert state is not None, "the claimed row vanished inside its own command"
        return self._claimed(row, state)

    @staticmethod
    def _claimed(row: Any, state: Any) -> Claimed:
        record_id: str = row["id"]
        return Claimed(
            record_id=record_id,
            token=row["acquisition_id"],
            stage=Stage(state["state"]),
            attempts=state["attempts"],
            state_entered_at=state["state_entered_at"],
            lease_taken_over=bool(state["lease_taken_over"]),
            lease_expires_at=state["acquire_expires_at"],
        )

    def _lease_params(self, ctx: WriteContext, moment: datetime, now: str) -> dict[str, object]:
        """The lease expiry of every claimable stage. Whole-second leases give
        the same expiries for every claim of the same second (stored times
        have second resolution): those are formatted once per transaction
        and second, not four times per claim."""
        memo = ctx.memo.setdefault(_LEASES_MEMO, {})
        assert isinstance(memo, dict)
        # By content: every step actor holds its own (equal) lease table.
        key = (now, tuple(self.leases.items()))
        params: dict[str, object] | None = memo.get(key)
        if params is None:
            params = {param: ctx.format(moment + timedelta(seconds=self.leases[stage]))
                      for stage, param in _LEASE_PARAMS}
            if all(float(self.leases[stage]).is_integer() for stage, _ in _LEASE_PARAMS):
                memo[key] = params
        return params


@dataclass(frozen=True, slots=True, kw_only=True)
class RenewLease(Command[None]):
    """The heartbeat of a running step: push the lease forward (P4)."""

    name: ClassVar[str] = "renew_lease"
    savepoint: ClassVar[bool] = False  # one holder write: lands whole or not at all
    record_id: str
    token: str
    lease_seconds: float

    async def execute(self, ctx: WriteContext) -> None:
        await holder_write(
            ctx, q.pipeline.RENEW_LEASE,
            {"id": self.record_id, "token": self.token,
             "until": ctx.now(plus_seconds=self.lease_seconds)},
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Advance(Command[None]):
    """The step succeeded: next stage, journal row, then the step's effects,
    all in this command's savepoint (an effect that raises undoes it all).
    Reaching `done`, the effects carry the follow-ups' rows (`followups.after`)."""

    name: ClassVar[str] = "advance"
    record_id: str
    token: str
    step: str
    effects: tuple[Effect, ...] = ()
    duration_ms: int | None = None

    async def execute(self, ctx: WriteContext) -> None:
        spec = spec_of(stage_of_step(self.step))
        assert spec.next_stage is not None, "a step always has a next stage"
        cursor = await ctx.conn.execute(
            q.pipeline.ADVANCE,
            {"id": self.record_id, "token": self.token, "stage": spec.stage.value,
             "next_stage": spec.next_stage.value, "now": ctx.now()},
        )
        if cursor.rowcount != 1:
            raise ClaimLost
        await insert_event(ctx, record_id=self.record_id, origin="pipeline", step=self.step,
                           outcome="done", duration_ms=self.duration_ms)
        for effect in self.effects:
            await effect.apply(ctx, record_id=self.record_id, step=self.step)


@dataclass(frozen=True, slots=True, kw_only=True)
class Defer(Command[None]):
    """Wait for a foreign operation (P12): delay, release, attempts back to 0;
    stage, `state_entered_at` and the journal stay untouched."""

    name: ClassVar[str] = "defer"
    savepoint: ClassVar[bool] = False  # one holder write: lands whole or not at all
    record_id: str
    token: str
    delay_seconds: float

    async def execute(self, ctx: WriteContext) -> None:
        await holder_write(
            ctx, q.pipeline.DEFER,
            {"id": self.record_id, "token": self.token,
             "until": ctx.now(plus_seconds=self.delay_seconds)},
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Fail(Command[None]):
    """A transient failure (P5): backoff delay, release; the attempts stay."""

    name: ClassVar[str] = "fail"
    savepoint: ClassVar[bool] = False  # one holder write: lands whole or not at all
    record_id: str
    token: str
    delay_seconds: float
    error_text: str

    async def execute(self, ctx: WriteContext) -> None:
        await holder_write(
            ctx, q.pipeline.FAIL,
            {"id": self.record_id, "token": self.token, "error_text": self.error_text,
             "until": ctx.now(plus_seconds=self.delay_seconds)},
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Halt(Command[None]):
    """Set the halt flag (P9), written by the claim holder, with a journal row
    and the follow-ups' rows (`effects`: the halt notice, the webhooks)."""

    name: ClassVar[str] = "halt"
    record_id: str
    token: str
    reason: HaltReason
    error_text: str
    duration_ms: int | None = None
    effects: tuple[Effect, ...] = ()

    async def execute(self, ctx: WriteContext) -> None:
        async with ctx.conn.execute(
            q.pipeline.HALT,
            {"id": self.record_id, "token": self.token, "reason": self.reason.value,
             "error_text": self.error_text, "now": ctx.now()},
        ) as cursor:
            row = await cursor.fetchone()
        if row is None:
            raise ClaimLost
        step = spec_of(row["state"]).step or row["state"]
        await insert_event(ctx, record_id=self.record_id, origin="pipeline", step=step,
                           outcome="halted", outcome_text=self.reason.value,
                           duration_ms=self.duration_ms)
        for effect in self.effects:
            await effect.apply(ctx, record_id=self.record_id, step=step)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReleaseOnShutdown(Command[None]):
    """The service stops under a running step (P16): give the attempt back and
    release the claim, without a verdict."""

    name: ClassVar[str] = "release_on_shutdown"
    savepoint: ClassVar[bool] = False  # one holder write: lands whole or not at all
    record_id: str
    token: str

    async def execute(self, ctx: WriteContext) -> None:
        await holder_write(
            ctx, q.pipeline.RELEASE_ON_SHUTDOWN, {"id": self.record_id, "token": self.token}
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Resumed:
    record_id: str
    stage: Stage


@dataclass(frozen=True, slots=True, kw_only=True)
class Resume(Command[Resumed]):
    """A person resumes a halted record (P9): clear the flag, reset attempts,
    delay and `state_entered_at`; any claim is released, so a step still
    running under an old token writes nothing (P3). Journal origin `human`.

    Raises `NotFound` (no such record, or `owner_id` given and not the
    owner's) or `Conflict` (the record is not halted).
    """

    name: ClassVar[str] = "resume"
    record_id: str
    owner_id: str | None = None
    actor_id: str | None = None
    """Who asked (the journal names them); None: the command line, or the pipeline."""

    async def execute(self, ctx: WriteContext) -> Resumed:
        async with ctx.conn.execute(
            q.pipeline.SELECT_FOR_RESUME, {"id": self.record_id}
        ) as cursor:
            row = await cursor.fetchone()
        if row is None or (self.owner_id is not None and row["owner_id"] != self.owner_id):
            raise NotFound(f"record {self.record_id} not found")
        if row["halted_at"] is None:
            raise Conflict(f"record {self.record_id} is not halted")
        await ctx.conn.execute(q.pipeline.RESUME, {"id": self.record_id, "now": ctx.now()})
        await insert_event(ctx, record_id=self.record_id, origin="human", step="resume",
                           actor_id=self.actor_id,
                           outcome="resumed")
        return Resumed(record_id=self.record_id, stage=Stage(row["state"]))
