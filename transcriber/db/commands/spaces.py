"""Writer commands of sharing: spaces and their members, a record's space and direct
shares, and the journal lines naming who did each change (docs/sharing.md).

The commands do not decide who may do them: the doors ask
`transcriber.domain.access.may` first. They keep the invariants the schema
cannot: a space keeps at least one admin, and a removed member's records
leave the space with them (the owner keeps them; no record stays where its
owner cannot see it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from transcriber.core.errors import Conflict, NotFound
from transcriber.core.ids import new_id
from transcriber.db import queries as q
from transcriber.db.reads.access import Space
from transcriber.db.writer import Command, WriteContext
from transcriber.domain.access import AccessRole


async def journal(ctx: WriteContext, *, record_id: str, step: str, actor_id: str,
                  detail: str | None = None) -> None:
    """One line of the record's journal: `step` done by `actor_id`."""
    await ctx.conn.execute(q.spaces.INSERT_JOURNAL, {
        "id": new_id(), "record_id": record_id, "step": step, "detail": detail,
        "now": ctx.now(), "actor_id": actor_id})


async def _one(ctx: WriteContext, query: str, params: dict[str, object]) -> object | None:
    async with ctx.conn.execute(query, params) as cursor:
        row = await cursor.fetchone()
    return None if row is None else row[0]


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateSpace(Command[Space]):
    """A new space with its first admin; raises `Conflict` when the name is taken."""

    name: ClassVar[str] = "create_space"
    space_name: str
    admin_id: str

    async def execute(self, ctx: WriteContext) -> Space:
        if await _one(ctx, q.spaces.SPACE_BY_NAME, {"name": self.space_name}) is not None:
            raise Conflict("a space of that name exists")
        space_id, now = new_id(), ctx.now()
        await ctx.conn.execute(q.spaces.INSERT_SPACE,
                               {"id": space_id, "name": self.space_name, "now": now})
        await ctx.conn.execute(q.spaces.UPSERT_MEMBER, {
            "space_id": space_id, "user_id": self.admin_id, "role": AccessRole.ADMIN.value,
            "now": now})
        return Space(id=space_id, name=self.space_name, created_at=now)


async def _keeps_an_admin(ctx: WriteContext, space_id: str, user_id: str) -> None:
    """Raise `Conflict` when `user_id` is the space's last admin."""
    role = await _one(ctx, q.spaces.ROLE_IN_SPACE, {"space_id": space_id, "user_id": user_id})
    if role != AccessRole.ADMIN.value:
        return
    admins = await _one(ctx, q.spaces.COUNT_ADMINS, {"space_id": space_id})
    if admins is not None and int(str(admins)) <= 1:
        raise Conflict("a space keeps at least one admin")


@dataclass(frozen=True, slots=True, kw_only=True)
class SetMember(Command[None]):
    """Add a member, or change their role. A space's last admin cannot step down."""

    name: ClassVar[str] = "set_member"
    space_id: str
    user_id: str
    role: AccessRole

    async def execute(self, ctx: WriteContext) -> None:
        if self.role is not AccessRole.ADMIN:
            await _keeps_an_admin(ctx, self.space_id, self.user_id)
        await ctx.conn.execute(q.spaces.UPSERT_MEMBER, {
            "space_id": self.space_id, "user_id": self.user_id, "role": self.role.value,
            "now": ctx.now()})


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoveMember(Command[None]):
    """Remove a member; their records in the space leave it (journaled as moved by
    `actor_id`). Raises `NotFound` for a non-member, `Conflict` for the last admin."""

    name: ClassVar[str] = "remove_member"
    space_id: str
    user_id: str
    actor_id: str

    async def execute(self, ctx: WriteContext) -> None:
        await _keeps_an_admin(ctx, self.space_id, self.user_id)
        ids = {"space_id": self.space_id, "user_id": self.user_id}
        cursor = await ctx.conn.execute(q.spaces.DELETE_MEMBER, ids)
        if cursor.rowcount != 1:
            raise NotFound("not a member")
        async with ctx.conn.execute(q.spaces.MEMBER_RECORDS, ids) as cursor:
            leaving = [str(row["id"]) for row in await cursor.fetchall()]
        for record_id in leaving:
            await journal(ctx, record_id=record_id, step="moved", actor_id=self.actor_id)
        await ctx.conn.execute(q.spaces.MEMBER_RECORDS_OUT, {**ids, "now": ctx.now()})
        await ctx.conn.execute(q.spaces.CLEAR_DEFAULT_SPACE, ids)


@dataclass(frozen=True, slots=True, kw_only=True)
class MoveRecord(Command[None]):
    """Put the record in a space (None: out of any); journaled."""

    name: ClassVar[str] = "move_record"
    record_id: str
    space_id: str | None
    actor_id: str

    async def execute(self, ctx: WriteContext) -> None:
        cursor = await ctx.conn.execute(q.spaces.MOVE_RECORD, {
            "id": self.record_id, "space_id": self.space_id, "now": ctx.now()})
        if cursor.rowcount != 1:
            raise NotFound(f"record {self.record_id} not found")
        await journal(ctx, record_id=self.record_id, step="moved", actor_id=self.actor_id,
                      detail=self.space_id)


@dataclass(frozen=True, slots=True, kw_only=True)
class ShareRecord(Command[None]):
    """Share the record with one person (or change the share's role); journaled."""

    name: ClassVar[str] = "share_record"
    record_id: str
    user_id: str
    login: str
    role: AccessRole
    actor_id: str

    async def execute(self, ctx: WriteContext) -> None:
        await ctx.conn.execute(q.spaces.UPSERT_SHARE, {
            "record_id": self.record_id, "user_id": self.user_id, "role": self.role.value,
            "now": ctx.now()})
        await journal(ctx, record_id=self.record_id, step="shared", actor_id=self.actor_id,
                      detail=f"{self.login}:{self.role.value}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Unshare(Command[None]):
    """Revoke a direct share; raises `NotFound` when there is none. Journaled."""

    name: ClassVar[str] = "unshare_record"
    record_id: str
    user_id: str
    login: str
    actor_id: str

    async def execute(self, ctx: WriteContext) -> None:
        cursor = await ctx.conn.execute(q.spaces.DELETE_SHARE,
                                        {"record_id": self.record_id, "user_id": self.user_id})
        if cursor.rowcount != 1:
            raise NotFound("not shared with that person")
        await journal(ctx, record_id=self.record_id, step="unshared", actor_id=self.actor_id,
                      detail=self.login)


@dataclass(frozen=True, slots=True, kw_only=True)
class Journal(Command[None]):
    """A person's change to a record, named in its journal (an edit, a new transcript
    asked for, a member added who now sees it)."""

    name: ClassVar[str] = "journal"
    savepoint: ClassVar[bool] = False  # one INSERT
    record_id: str
    step: str
    actor_id: str
    detail: str | None = None

    async def execute(self, ctx: WriteContext) -> None:
        await journal(ctx, record_id=self.record_id, step=self.step, actor_id=self.actor_id,
                      detail=self.detail)


@dataclass(frozen=True, slots=True, kw_only=True)
class SetDefaultSpace(Command[None]):
    """The space a person's uploads go to when they name none (None: their own)."""

    name: ClassVar[str] = "set_default_space"
    savepoint: ClassVar[bool] = False
    user_id: str
    space_id: str | None

    async def execute(self, ctx: WriteContext) -> None:
        await ctx.conn.execute(q.spaces.SET_DEFAULT_SPACE,
                               {"user_id": self.user_id, "space_id": self.space_id})
