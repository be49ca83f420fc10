"""`transcriber space create|add|remove|list`: spaces and their members, for an operator
(docs/sharing.md).

`create NAME --admin LOGIN` makes a space with its first admin; `add NAME
LOGIN --role R` adds a member or changes their role; `remove NAME LOGIN`
removes one (their records in the space leave it with them); `list` shows
every space with how many members it has. A person named for the first time
is created, as a token's is. Each runs its own short-lived writer or reader
beside a running server; the answers come from the same commands and the
same rules (`domain.access`: a space keeps an admin) as the web app's.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from transcriber.cli.exits import EXIT_REFUSED
from transcriber.cli.storage import migrated_writer
from transcriber.cli.texts import say
from transcriber.core.clock import SystemClock
from transcriber.core.errors import Conflict, NotFound
from transcriber.db import reads
from transcriber.db.commands.spaces import CreateSpace, RemoveMember, SetMember
from transcriber.db.commands.users import EnsureUser
from transcriber.db.engine import migrate_storage, new_readers
from transcriber.db.reads.access import Space
from transcriber.db.reads.users import User
from transcriber.domain.access import AccessRole
from transcriber.settings import Settings


async def create(settings: Settings, *, name: str, admin: str) -> int:
    writer = await migrated_writer(settings)
    await writer.start()
    try:
        user = await writer.ask(EnsureUser(login=admin))
        space = await writer.ask(CreateSpace(space_name=name, admin_id=user.id))
    except Conflict:
        print(say("space.exists", name=name), file=sys.stderr)
        return EXIT_REFUSED
    finally:
        await writer.stop()
    print(say("space.created", name=space.name, id=space.id, login=admin), file=sys.stderr)
    return 0


async def _looked_up(settings: Settings, *, name: str,
                     login: str) -> tuple[Space | None, User | None]:
    """The space of that name and the person of that login (None: there is none)."""
    pool = new_readers(settings.storage, size=1)
    await pool.open()
    try:
        return (await reads.access.space_by_name(pool, name=name),
                await reads.users.by_login(pool, login=login))
    finally:
        await pool.close()


async def add(settings: Settings, *, name: str, login: str, role: str) -> int:
    writer = await migrated_writer(settings)
    space, _ = await _looked_up(settings, name=name, login=login)
    if space is None:
        print(say("space.not_found", name=name), file=sys.stderr)
        return EXIT_REFUSED
    await writer.start()
    try:
        user = await writer.ask(EnsureUser(login=login))
        await writer.ask(SetMember(space_id=space.id, user_id=user.id, role=AccessRole(role)))
    except Conflict:
        print(say("space.last_admin", name=name), file=sys.stderr)
        return EXIT_REFUSED
    finally:
        await writer.stop()
    print(say("space.added", name=name, login=login, role=role), file=sys.stderr)
    return 0


async def remove(settings: Settings, *, name: str, login: str) -> int:
    writer = await migrated_writer(settings)
    space, user = await _looked_up(settings, name=name, login=login)
    if space is None:
        print(say("space.not_found", name=name), file=sys.stderr)
        return EXIT_REFUSED
    if user is None:
        print(say("space.not_member", name=name, login=login), file=sys.stderr)
        return EXIT_REFUSED
    await writer.start()
    try:
        # The operator is who removed them: the journal of any record that leaves names
        # the person removed (no web identity here).
        await writer.ask(RemoveMember(space_id=space.id, user_id=user.id, actor_id=user.id))
    except NotFound:
        print(say("space.not_member", name=name, login=login), file=sys.stderr)
        return EXIT_REFUSED
    except Conflict:
        print(say("space.last_admin", name=name), file=sys.stderr)
        return EXIT_REFUSED
    finally:
        await writer.stop()
    print(say("space.removed", name=name, login=login), file=sys.stderr)
    return 0


async def show(settings: Settings) -> int:
    await migrate_storage(settings.storage, clock=SystemClock())
    pool = new_readers(settings.storage, size=1)
    await pool.open()
    try:
        found = await reads.access.all_spaces(pool)
        members = {space.id: await reads.access.members(pool, space_id=space.id)
                   for space in found}
    finally:
        await pool.close()
    if not found:
        print(say("space.none"), file=sys.stderr)
        return 0
    print(say("space.header"))
    for space in found:
        people = ", ".join(f"{m.login}:{m.role.value}" for m in members[space.id]) or "-"
        print("\t".join((space.id, space.name, space.created_at, people)))
    return 0


def run(args: argparse.Namespace, settings: Settings) -> int:
    if args.action == "create":
        return asyncio.run(create(settings, name=args.name, admin=args.admin))
    if args.action == "add":
        return asyncio.run(add(settings, name=args.name, login=args.login, role=args.role))
    if args.action == "remove":
        return asyncio.run(remove(settings, name=args.name, login=args.login))
    return asyncio.run(show(settings))
