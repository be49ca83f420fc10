"""`transcriber token create|list|revoke`: personal access tokens, for an operator.

`create LOGIN` prints the new token alone on stdout (a script can capture
it) and says the rest on stderr; it is shown once, only its hash is stored.
The person is created when they have never signed in (a token for a script's
own account). `list [LOGIN]` shows names, scopes and times, never a token;
`revoke TOKEN_ID` deletes it, refused from the next request on, also by a
running server (it reads the token on every request). Each runs its own
short-lived writer or reader on the database, beside a running server.
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
from transcriber.core.ids import parse_id
from transcriber.db import reads
from transcriber.db.commands.tokens import CreateToken, RevokeToken
from transcriber.db.commands.users import EnsureUser
from transcriber.db.engine import migrate_storage, new_readers
from transcriber.db.reads.tokens import TokenInfo
from transcriber.domain.tokens import expires_at, new_token
from transcriber.settings import Settings


async def create(settings: Settings, *, login: str, name: str, scope: str,
                 days: int | None) -> int:
    writer = await migrated_writer(settings)
    await writer.start()
    made = new_token()
    try:
        user = await writer.ask(EnsureUser(login=login))
        info = await writer.ask(CreateToken(
            user_id=user.id, token_name=name, scope=scope, token_hash=made.hash,
            expires_at=expires_at(SystemClock().now(), days),
            most=settings.server.tokens_per_user_max))
    except Conflict:
        print(say("token.too_many", login=login), file=sys.stderr)
        return EXIT_REFUSED
    finally:
        await writer.stop()
    print(made.text)
    expiry = (say("token.until", at=info.expires_at) if info.expires_at
              else say("token.never"))
    print(say("token.created", id=info.id, login=login, scope=info.scope, expiry=expiry),
          file=sys.stderr)
    return 0


async def show(settings: Settings, *, login: str | None) -> int:
    await migrate_storage(settings.storage, clock=SystemClock())
    pool = new_readers(settings.storage, size=1)
    await pool.open()
    try:
        if login is None:
            found = await reads.tokens.every(pool)
        else:
            user = await reads.users.by_login(pool, login=login)
            if user is None:
                print(say("token.no_user", login=login), file=sys.stderr)
                return EXIT_REFUSED
            found = await reads.tokens.of_user(pool, user_id=user.id)
    finally:
        await pool.close()
    if not found:
        print(say("token.none"), file=sys.stderr)
        return 0
    print(say("token.header"))
    for info in found:
        print(_line(info))
    return 0


def _line(info: TokenInfo) -> str:
    # One line per token, tab-separated (a name is one line: `tokens.name_problem`).
    return "\t".join((info.id, info.login, info.name or "-", info.scope, info.created_at,
                      info.last_used_at or say("token.never_used"),
                      info.expires_at or say("token.no_expiry")))


async def revoke(settings: Settings, *, raw_id: str) -> int:
    token_id = parse_id(raw_id)
    if token_id is None:
        print(say("token.not_found", id=raw_id), file=sys.stderr)
        return EXIT_REFUSED
    writer = await migrated_writer(settings)
    await writer.start()
    try:
        await writer.ask(RevokeToken(token_id=token_id))
    except NotFound:
        print(say("token.not_found", id=token_id), file=sys.stderr)
        return EXIT_REFUSED
    finally:
        await writer.stop()
    print(say("token.revoked", id=token_id), file=sys.stderr)
    return 0


def run(args: argparse.Namespace, settings: Settings) -> int:
    if args.action == "create":
        return asyncio.run(create(settings, login=args.login, name=args.name,
                                  scope=args.scope, days=args.expires_days))
    if args.action == "list":
        return asyncio.run(show(settings, login=args.login))
    return asyncio.run(revoke(settings, raw_id=args.token_id))
