"""Local Bot API mode reads files in place, but only inside `telegram.local_files_dir`.

A local `telegram-bot-api --local` answers `getFile` with an absolute path;
the door does not trust it to name the sender's own file: a `..` escape,
another folder, or a symlink on the way is refused politely (the sender is
told the file could not be fetched), nothing is stored, the refusal is
counted, and the log carries the reason, never the path.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
import structlog

from tests.helpers.bot import ALICE_ID, OGG, DoorHarness
from tests.helpers.pipeline import sample, until
from tests.helpers.texts import T, en
from transcriber.db.readers import ReaderPool
from transcriber.testing.fake_telegram import FakeTelegram, SentMessage

Harness = Callable[..., DoorHarness]
REFUSED = "refused_outside_local_files"


@pytest.fixture
def bot_api_dir(fake_tg: FakeTelegram, tmp_path: Path) -> Path:
    fake_tg.local_dir = tmp_path / "telegram-bot-api"
    return fake_tg.local_dir


async def _answers(fake: FakeTelegram, count: int) -> list[SentMessage]:
    async with asyncio.timeout(10):
        return list(await fake.wait_sent(count))


async def _records(readers: ReaderPool) -> int:
    row = await readers.fetch_one("SELECT count(*) AS n FROM audio_records", {})
    assert row is not None
    return int(row["n"])


def _refusals() -> float:
    return sample("transcriber_telegram_updates_total", {"outcome": REFUSED})


def _escape(fake: FakeTelegram, bot_api_dir: Path, tmp_path: Path) -> tuple[str, str]:
    secret = tmp_path / "secret.oga"
    secret.write_bytes(OGG)
    return fake.add_file(OGG), f"{bot_api_dir}/{fake.token}/../../secret.oga"


def _other_folder(fake: FakeTelegram, bot_api_dir: Path, tmp_path: Path) -> tuple[str, str]:
    other = tmp_path / "data-of-someone" / "records" / "r1" / "original.oga"
    other.parent.mkdir(parents=True)
    other.write_bytes(OGG)
    return fake.add_file(OGG), str(other)


def _symlinked_file(fake: FakeTelegram, bot_api_dir: Path, tmp_path: Path) -> tuple[str, str]:
    secret = tmp_path / "secret.oga"
    secret.write_bytes(OGG)
    file_id = fake.add_file(OGG)
    path = Path(fake.files[file_id].file_path)
    path.unlink()
    path.symlink_to(secret)
    return file_id, str(path)


def _symlinked_folder(fake: FakeTelegram, bot_api_dir: Path, tmp_path: Path) -> tuple[str, str]:
    file_id = fake.add_file(OGG)
    path = Path(fake.files[file_id].file_path)
    elsewhere = tmp_path / "elsewhere"
    path.parent.rename(elsewhere)
    path.parent.symlink_to(elsewhere, target_is_directory=True)
    return file_id, str(path)


def _linked(folder: Path, link: Path) -> Path:
    folder.mkdir()
    link.symlink_to(folder, target_is_directory=True)
    return link


@pytest.mark.parametrize("craft", [_escape, _other_folder, _symlinked_file, _symlinked_folder])
async def test_a_path_outside_the_local_files_dir_is_refused(
    door_harness: Harness, fake_tg: FakeTelegram, readers: ReaderPool, data_dir: Path,
    bot_api_dir: Path, tmp_path: Path,
    craft: Callable[[FakeTelegram, Path, Path], tuple[str, str]],
) -> None:
    file_id, answered = craft(fake_tg, bot_api_dir, tmp_path)
    fake_tg.answer_path(file_id, answered)
    before = _refusals()
    run = door_harness(local_mode=True, local_files_dir=bot_api_dir).start()
    with structlog.testing.capture_logs() as logs:
        fake_tg.push_voice(sender_id=ALICE_ID, file_id=file_id)
        [answer] = await _answers(fake_tg, 1)
    assert answer.text == en(T.NOT_DOWNLOADABLE)
    assert await _records(readers) == 0
    assert not [p for p in (data_dir / "records").rglob("*") if p.is_file()]
    await until(lambda: _refusals() == before + 1)  # counted once the update is dealt with
    [refused] = [e for e in logs if e["event"] == "telegram_refused"]
    assert refused["reason"] == "outside_local_files"
    assert str(tmp_path) not in str(logs)
    await run.stop()


async def test_the_folder_may_be_named_through_a_symlink_of_the_operator(
    door_harness: Harness, fake_tg: FakeTelegram, readers: ReaderPool, bot_api_dir: Path,
    tmp_path: Path,
) -> None:
    """A symlink *above* the folder is the operator's own: the server may answer the
    real path or the linked one."""
    link = _linked(bot_api_dir, tmp_path / "bot-api-link")
    real = fake_tg.add_file(OGG)
    linked = fake_tg.add_file(OGG + b"2")
    fake_tg.answer_path(linked, fake_tg.files[linked].file_path.replace(
        str(bot_api_dir), str(link)))
    run = door_harness(local_mode=True, local_files_dir=link).start()
    fake_tg.push_voice(sender_id=ALICE_ID, file_id=real)
    fake_tg.push_voice(sender_id=ALICE_ID, file_id=linked)
    answers = await _answers(fake_tg, 2)
    assert [a.text for a in answers] == [en(T.ACCEPTED)] * 2
    assert await _records(readers) == 2
    await run.stop()
