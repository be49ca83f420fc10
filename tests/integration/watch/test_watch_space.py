"""`watch.space` (issue 41 with 42, docs/watched-folder.md): a watched folder's records
are filed into that space, in their own transaction, when the folder's owner may add
records there; while the space is missing, or the owner only views it, the files wait
in the folder and are taken once the owner may."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.database import TestDatabase
from tests.helpers.settings import SettingsFactory
from transcriber.db.commands.spaces import CreateSpace, SetMember
from transcriber.db.commands.users import EnsureUser
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.domain.access import AccessRole
from transcriber.providers.local_files import LocalRecordFiles
from transcriber.service.watch import FolderWatcher
from transcriber.settings import Secret
from transcriber.testing.clock import FakeClock
from transcriber.testing.transcoder import FakeTranscoder

STABLE = 10.0


async def _settle(watcher: FolderWatcher, clock: FakeClock) -> int:
    taken = await watcher.look_once()
    clock.advance(STABLE)
    return taken + await watcher.look_once()


async def test_the_records_go_into_the_space_once_the_owner_may_add_them(
        make_settings: SettingsFactory, tmp_path: Path, writer: Writer, readers: ReaderPool,
        record_files: LocalRecordFiles, clock: FakeClock, database: TestDatabase,
        database_url: str | None) -> None:
    folder = tmp_path / "inbox"
    folder.mkdir()
    storage = {} if database_url is None else {"database_url": Secret(database_url)}
    settings = make_settings(storage=storage, watch={
        "dirs": (str(folder),), "owner": "alice", "space": "family",
        "stable_seconds": STABLE})
    watcher = FolderWatcher(settings=settings, writer=writer, readers=readers,
                            files=record_files, transcoder=FakeTranscoder(), clock=clock)
    memo = folder / "memo.m4a"
    memo.write_bytes(b"recording")

    # No such space yet: the file waits, nothing is stored.
    assert await _settle(watcher, clock) == 0
    assert memo.exists()
    bob = await writer.ask(EnsureUser(login="bob"))
    alice = await writer.ask(EnsureUser(login="alice"))
    space = await writer.ask(CreateSpace(space_name="family", admin_id=bob.id))
    # The space, but the owner is not its member, then only its viewer: still waiting.
    assert await _settle(watcher, clock) == 0
    await writer.ask(SetMember(space_id=space.id, user_id=alice.id, role=AccessRole.VIEWER))
    assert await _settle(watcher, clock) == 0
    assert memo.exists()
    assert database.count("audio_records") == 0

    await writer.ask(SetMember(space_id=space.id, user_id=alice.id, role=AccessRole.EDITOR))
    assert await _settle(watcher, clock) == 1
    assert not memo.exists()
    assert database.rows("SELECT space_id, owner_id FROM audio_records") == [
        (space.id, alice.id)]
    # Journaled as the owner's move into the space, as an upload into a space is.
    assert database.rows("SELECT step, outcome_text, actor_id FROM record_events "
                         "WHERE actor_id IS NOT NULL") == [("moved", space.id, alice.id)]
