"""Group chats linked to a space (docs/telegram.md "Group chats"): `/link SPACE`,
`/unlink`, and whose record a group's audio becomes.

`/link SPACE` (the space's name, or its id) is heard from a listed sender who may
file records into that space — its editor or admin (`domain.access.may_in_space`,
`Action.MOVE`, the rule the web app's uploads follow); a space the sender is not a
member of is answered as one that does not exist. A group linked before is linked
to the new space instead. `/unlink` is heard from the space's editors and admins
and from whoever linked the group.

A linked group's audio becomes a record of the space, owned by its sender when the
sender is listed and may file records there, else by the person who linked the
group (their quota counts it): whoever links a group vouches for what its members
send. The link holds only while its linker may still file records into the space
(`LinkedGroup.live`): a linker removed from the space, or made a viewer, takes the
group's view of the space with them. Logged: the chat id, the space id and the
outcome, never the space's name as typed.
"""

from __future__ import annotations

import structlog

from transcriber.bot import rules, texts
from transcriber.bot.texts import T
from transcriber.core.ids import parse_id
from transcriber.db import reads
from transcriber.db.commands.spaces import MoveRecord
from transcriber.db.commands.telegram import LinkGroup, UnlinkGroup
from transcriber.db.commands.users import EnsureUser
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.access import Space
from transcriber.db.reads.telegram import LinkedGroup
from transcriber.db.writer import Writer
from transcriber.domain.access import AccessAnswer, Action, may_in_space

log = structlog.get_logger(__name__)


async def answer(decision: rules.GroupCommand, *, chat_id: int, readers: ReaderPool,
                 writer: Writer) -> tuple[str, bool]:
    """`/link` or `/unlink` done (or refused): the answer, and whether the group is
    linked now."""
    lang = decision.language
    if decision.login is None:
        log.info("telegram_group_refused", chat_id=chat_id, reason="not_allowed")
        return texts.say(lang, T.LINK_NOT_ALLOWED), False
    user = await writer.ask(EnsureUser(login=decision.login))
    if decision.command == "/unlink":
        return await _unlink(lang, chat_id=chat_id, user_id=user.id, readers=readers,
                             writer=writer)
    if not decision.argument:
        return texts.say(lang, T.LINK_USAGE), False
    space = await _space_named(readers, decision.argument)
    role = None if space is None else await reads.access.role_in_space(
        readers, space_id=space.id, user_id=user.id)
    allowed = may_in_space(Action.MOVE, role)
    if space is None or allowed is AccessAnswer.NOT_FOUND:
        log.info("telegram_group_refused", chat_id=chat_id, reason="no_space")
        return texts.say(lang, T.LINK_NO_SPACE), False
    if allowed is AccessAnswer.FORBIDDEN:
        log.info("telegram_group_refused", chat_id=chat_id, reason="forbidden")
        return texts.say(lang, T.LINK_FORBIDDEN), False
    await writer.ask(LinkGroup(chat_id=chat_id, space_id=space.id, linked_by=user.id))
    log.info("telegram_group_linked", chat_id=chat_id, space_id=space.id)
    return texts.say(lang, T.LINKED, space=space.name), True


async def _unlink(lang: texts.Language, *, chat_id: int, user_id: str, readers: ReaderPool,
                  writer: Writer) -> tuple[str, bool]:
    group = await reads.telegram.group_of_chat(readers, chat_id=chat_id)
    if group is None:
        return texts.say(lang, T.GROUP_NOT_LINKED), False
    role = await reads.access.role_in_space(readers, space_id=group.space_id, user_id=user_id)
    if user_id != group.linked_by and \
            may_in_space(Action.MOVE, role) is not AccessAnswer.ALLOWED:
        log.info("telegram_group_refused", chat_id=chat_id, reason="forbidden")
        return texts.say(lang, T.UNLINK_FORBIDDEN), group.live()
    await writer.ask(UnlinkGroup(chat_id=chat_id))
    log.info("telegram_group_unlinked", chat_id=chat_id, space_id=group.space_id)
    return texts.say(lang, T.UNLINKED), False


async def _space_named(readers: ReaderPool, name: str) -> Space | None:
    """The space of that name, else of that id."""
    found = await reads.access.space_by_name(readers, name=name)
    if found is not None:
        return found
    space_id = parse_id(name)
    return None if space_id is None else await reads.access.space_by_id(readers,
                                                                         space_id=space_id)


async def owner_of(decision: rules.TakeFile, group: LinkedGroup, *, readers: ReaderPool,
                   writer: Writer) -> str:
    """Whose record a linked group's audio becomes: its listed sender's, when they may file
    records into the space, else the linker's."""
    if decision.login is not None:
        user = await writer.ask(EnsureUser(login=decision.login))
        role = await reads.access.role_in_space(readers, space_id=group.space_id,
                                                user_id=user.id)
        if may_in_space(Action.MOVE, role) is AccessAnswer.ALLOWED:
            return user.id
    return group.linked_by


async def file_into_space(record_id: str, group: LinkedGroup, *, owner_id: str,
                          readers: ReaderPool, writer: Writer) -> None:
    """The group's record into its space (journaled as moved by its owner); a record
    stored by an earlier try of the same update is filed if it is not yet."""
    inside = await reads.webhooks.record_in_space(readers, record_id=record_id,
                                                  space_id=group.space_id)
    if inside is False:
        await writer.ask(MoveRecord(record_id=record_id, space_id=group.space_id,
                                    actor_id=owner_id))
