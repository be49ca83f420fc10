"""The aiogram `Bot` of this service, pointed at `telegram.api_base`.

The token travels in every URL path, so neither URLs nor the text of client
errors (which can quote them) are ever logged: only error class names.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import BinaryIO

from aiogram import Bot
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.utils.token import TokenValidationError, validate_token

from transcriber.core.errors import ConfigError
from transcriber.core.paths import open_file_inside, relative_names
from transcriber.settings import TelegramSettings


def make_bot(settings: TelegramSettings) -> Bot:
    if settings.token is None:
        raise ConfigError("telegram.token", "is not set")
    try:
        validate_token(settings.token.value)
    except TokenValidationError:
        raise ConfigError("telegram.token", "is not a bot token (digits:letters)") from None
    session = AiohttpSession(
        api=TelegramAPIServer.from_base(settings.api_base.rstrip("/")),
        timeout=settings.request_timeout_seconds,
    )
    return Bot(token=settings.token.value, session=session)


def file_url(bot: Bot, file_path: str) -> str:
    """`<api_base>/file/bot<token>/<file_path>`: where the Bot API serves a file."""
    return bot.session.api.file_url(bot.token, file_path)


async def local_file_chunks(root: Path, file_path: str,
                            chunk_size: int) -> AsyncGenerator[bytes]:
    """A file a local Bot API server (`--local`) keeps on this machine, read in place.

    Its `getFile` answers the absolute path instead of serving the bytes; they
    are streamed from there (no 20 MB limit), off the event loop. Only inside
    `root` (`telegram.local_files_dir`, as configured or resolved): a path
    elsewhere, a `..`, a symlink on the way or anything but a regular file
    raises `UnsafePath` before a byte is read — the server's answer is not
    trusted to name the sender's own file."""
    handle = await asyncio.to_thread(open_local_file, root, file_path)
    try:
        while chunk := await asyncio.to_thread(handle.read, chunk_size):
            yield chunk
    finally:
        handle.close()


def open_local_file(root: Path, file_path: str) -> BinaryIO:
    """The file a local server's `getFile` answered, opened inside `root` (the
    refusals of `local_file_chunks`). The answer may name `root` as configured or
    as resolved (a symlink above it is the operator's own)."""
    resolved = root.resolve()
    names = relative_names(file_path, (root, resolved))
    return open_file_inside(resolved, names)
