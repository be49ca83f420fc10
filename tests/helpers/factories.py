"""Test data made through the real writer commands."""

from __future__ import annotations

from transcriber.core.ids import new_id
from transcriber.db.commands.files import StoredFile
from transcriber.db.commands.records import AcceptRecord
from transcriber.db.commands.users import EnsureUser, User
from transcriber.db.writer import Writer


async def make_user(writer: Writer, login: str = "alice") -> User:
    return await writer.ask(EnsureUser(login=login, display_name=login.title()))


async def make_record(
    writer: Writer,
    owner: User,
    *,
    duration_ms: int = 1000,
    source: str = "http",
    tg_chat_id: int | None = None,
    tg_message_id: int | None = None,
) -> str:
    """A record at the first stage with a (fictitious) original file row."""
    record_id = new_id()
    file_id = new_id()
    accepted = await writer.ask(
        AcceptRecord(
            record_id=record_id,
            owner_id=owner.id,
            original=StoredFile(id=file_id, file_name=f"{file_id}.wav", size_bytes=100,
                                format="wav", duration_ms=duration_ms),
            original_filename="talk.wav",
            duration_ms=duration_ms,
            source="telegram" if source == "telegram" else "http",
            tg_chat_id=tg_chat_id,
            tg_message_id=tg_message_id,
        )
    )
    return accepted.record_id
