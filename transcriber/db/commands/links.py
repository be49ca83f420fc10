"""Links for people outside: made, revoked, and an opening counted (docs/sharing.md).

The commands never see a link's secret: the door hashes it
(`transcriber.domain.links.new_link`) and hands over the hash. Who may make or
revoke a record's link is the door's decision, taken before the command; the
commands keep each link to its record (a link id of another record is not
found). Each writes the record's journal (`record_events`, origin `human`):
`link_created` and `link_revoked` by the person who made or revoked the link
(`actor_id`, the timeline's `by`), and `link_opened` once per link, at its first
opening, by nobody the service knows (someone outside with the link); later
openings are the link row's `views` and `last_opened_at`, so neither table grows
with the views.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from transcriber.core.errors import Conflict, NotFound
from transcriber.core.ids import new_id
from transcriber.db import queries as q
from transcriber.db.commands.pipeline import insert_event
from transcriber.db.reads.links import LinkInfo
from transcriber.db.writer import Command, WriteContext

# The default of `links.per_record_max`: more live links than this on one record
# is a script, not a person sending a transcript to a few people.
LINKS_PER_RECORD_MAX = 20


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateLink(Command[LinkInfo]):
    """Store a new link's hash for `record_id`. The record's expired links are deleted
    first; raises `Conflict` when it still holds `most` links."""

    name: ClassVar[str] = "create_link"
    record_id: str
    created_by: str
    secret_hash: str
    audio: bool
    expires_at: str
    most: int = LINKS_PER_RECORD_MAX

    async def execute(self, ctx: WriteContext) -> LinkInfo:
        await ctx.conn.execute(q.links.DELETE_EXPIRED_OF_RECORD,
                               {"record_id": self.record_id, "now": ctx.now()})
        async with ctx.conn.execute(q.links.COUNT_OF_RECORD,
                                    {"record_id": self.record_id}) as cursor:
            row = await cursor.fetchone()
        if row is not None and int(row["n"]) >= self.most:
            raise Conflict(f"at most {self.most} links per record")
        link_id = new_id()
        await ctx.conn.execute(q.links.INSERT, {
            "id": link_id, "record_id": self.record_id, "created_by": self.created_by,
            "secret_hash": self.secret_hash, "audio": int(self.audio), "now": ctx.now(),
            "expires_at": self.expires_at,
        })
        await insert_event(ctx, record_id=self.record_id, origin="human",
                           step="link_created", outcome="done", actor_id=self.created_by)
        async with ctx.conn.execute(q.links.BY_ID, {"id": link_id}) as cursor:
            created = await cursor.fetchone()
        assert created is not None
        return LinkInfo.from_row(created)


@dataclass(frozen=True, slots=True, kw_only=True)
class RevokeLink(Command[None]):
    """Delete the link: its next opening is the 404 of a link that never existed.
    Raises `NotFound` when `record_id` has no such link."""

    name: ClassVar[str] = "revoke_link"
    link_id: str
    record_id: str
    actor_id: str
    """Who revoked it (the journal's author)."""

    async def execute(self, ctx: WriteContext) -> None:
        cursor = await ctx.conn.execute(q.links.DELETE_OF_RECORD,
                                        {"id": self.link_id, "record_id": self.record_id})
        if cursor.rowcount != 1:
            raise NotFound(f"link {self.link_id} not found")
        await insert_event(ctx, record_id=self.record_id, origin="human",
                           step="link_revoked", outcome="done", actor_id=self.actor_id)


@dataclass(frozen=True, slots=True, kw_only=True)
class CountOpening(Command[int]):
    """One opening of a link's page: `views` + 1 and `last_opened_at`; the journal's
    `link_opened` at the first. Answers the views counted so far (0: the link was
    revoked or expired since it was read, and nothing was counted)."""

    name: ClassVar[str] = "count_link_opening"
    link_id: str
    record_id: str

    async def execute(self, ctx: WriteContext) -> int:
        cursor = await ctx.conn.execute(q.links.COUNT_OPENING,
                                        {"id": self.link_id, "now": ctx.now()})
        if cursor.rowcount != 1:
            return 0
        async with ctx.conn.execute(q.links.VIEWS, {"id": self.link_id}) as reading:
            row = await reading.fetchone()
        views = 0 if row is None else int(row["views"])
        if views == 1:
            await insert_event(ctx, record_id=self.record_id, origin="human",
                               step="link_opened", outcome="done")
        return views
