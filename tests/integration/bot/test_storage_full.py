"""A Telegram download that cannot fit is never started: the sender is told why."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.bot import ALICE_ID, OGG, DoorHarness
from tests.helpers.small_disk import SmallDisk
from tests.helpers.texts import T, en
from transcriber.db.readers import ReaderPool
from transcriber.providers.local_files import LocalRecordFiles
from transcriber.testing.fake_telegram import FakeTelegram

MARGIN = 10_000


@pytest.fixture
def disk() -> SmallDisk:
    return SmallDisk(capacity=MARGIN + len(OGG) - 1)  # one byte short


@pytest.fixture
def record_files(data_dir: Path, disk: SmallDisk) -> LocalRecordFiles:
    return LocalRecordFiles(data_dir, min_free_bytes=MARGIN, free_bytes=disk.free_bytes,
                       opener=disk.open)


async def test_a_file_without_room_is_refused_with_a_message_and_nothing_stored(
    door_harness: Callable[..., DoorHarness], fake_tg: FakeTelegram, readers: ReaderPool,
    data_dir: Path, disk: SmallDisk,
) -> None:
    file_id = fake_tg.add_file(OGG)
    fake_tg.push_voice(sender_id=ALICE_ID, file_id=file_id)
    run = door_harness().start()
    async with asyncio.timeout(10):
        [answer] = await fake_tg.wait_sent(1)
    await run.stop()
    assert answer.text == en(T.STORAGE_FULL)
    row = await readers.fetch_one("SELECT count(*) AS n FROM audio_records", {})
    assert row is not None
    assert row["n"] == 0
    assert disk.used == 0
    assert not [p for p in (data_dir / "records").rglob("*") if p.is_file()]
