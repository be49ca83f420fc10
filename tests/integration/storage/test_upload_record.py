"""A resumable upload's record and its mark are one transaction (`AcceptRecord`'s
`upload_id`, issue 42's crash window), on both engines: the upload names the record;
accepting it again answers that record and keeps no second one; an upload removed
meanwhile makes no record at all."""

from __future__ import annotations

import pytest

from tests.helpers.factories import make_user
from transcriber.core.errors import Conflict
from transcriber.core.ids import new_id, new_unguessable_id
from transcriber.db import reads
from transcriber.db.commands.files import StoredFile
from transcriber.db.commands.records import AcceptRecord
from transcriber.db.commands.uploads import CreateUpload, DeleteUpload
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _accept(owner_id: str, upload_id: str) -> AcceptRecord:
    record_id, file_id = new_id(), new_id()
    return AcceptRecord(
        record_id=record_id, owner_id=owner_id,
        original=StoredFile(id=file_id, file_name=f"{file_id}.webm", size_bytes=10,
                            format="webm", duration_ms=1000),
        original_filename="Recording.webm", duration_ms=1000, upload_id=upload_id)


async def _upload(writer: Writer, owner_id: str) -> str:
    upload_id = new_unguessable_id()
    await writer.ask(CreateUpload(upload_id=upload_id, owner_id=owner_id, length=10,
                                  filename="Recording.webm", language=None, space=None,
                                  ttl_seconds=3600, most=5))
    return upload_id


async def test_the_upload_names_its_record_and_a_second_accept_makes_none(
        writer: Writer, readers: ReaderPool) -> None:
    owner = await make_user(writer)
    upload_id = await _upload(writer, owner.id)
    first = await writer.ask(_accept(owner.id, upload_id))
    assert first.created
    upload = await reads.uploads.owned(readers, upload_id=upload_id, owner_id=owner.id)
    assert upload is not None
    assert upload.record_id == first.record_id
    # The retry after a server stopped right there: the same record, none made.
    again = await writer.ask(_accept(owner.id, upload_id))
    assert again.record_id == first.record_id
    assert not again.created
    assert await reads.records.card(readers, record_id=first.record_id,
                                    owner_id=owner.id) is not None


async def test_an_upload_removed_meanwhile_makes_no_record(
        writer: Writer, readers: ReaderPool) -> None:
    owner = await make_user(writer)
    upload_id = await _upload(writer, owner.id)
    await writer.ask(DeleteUpload(upload_id=upload_id))
    accept = _accept(owner.id, upload_id)
    with pytest.raises(Conflict):
        await writer.ask(accept)
    assert await reads.records.card(readers, record_id=accept.record_id,
                                    owner_id=owner.id) is None
