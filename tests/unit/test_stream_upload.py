"""The streaming writer of record files holds one part at a time: an upload of any
length costs one part of memory (`S3ObjectStore.stream_upload`, against a client that
records what it is sent)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from transcriber.providers.object_store import S3ObjectStore
from transcriber.settings import S3Settings

PART = 1024
CHUNK = 100


class RecordingClient:
    """The multipart calls of an S3 client; counts what the stream has handed over but
    no request has sent yet (what the writer holds)."""

    def __init__(self) -> None:
        self.read = 0
        self.sent = 0
        self.most_held = 0
        self.parts: list[int] = []
        self.calls: list[str] = []

    def pulled(self, size: int) -> None:
        self.read += size
        self.most_held = max(self.most_held, self.read - self.sent)

    async def create_multipart_upload(self, **_: Any) -> dict[str, str]:
        self.calls.append("create")
        return {"UploadId": "u"}

    async def upload_part(self, *, Body: bytes, PartNumber: int, **_: Any) -> dict[str, str]:
        self.sent += len(Body)
        self.parts.append(len(Body))
        return {"ETag": f'"{PartNumber}"'}

    async def complete_multipart_upload(self, **_: Any) -> None:
        self.calls.append("complete")

    async def abort_multipart_upload(self, **_: Any) -> None:
        self.calls.append("abort")

    async def put_object(self, *, Body: bytes, **_: Any) -> None:
        self.sent += len(Body)
        self.calls.append("put")


def _store(client: RecordingClient) -> S3ObjectStore:
    store = S3ObjectStore(S3Settings(bucket="b"))
    store._client = client  # the client `start()` would open
    return store


async def _body(client: RecordingClient, total: int, *, fail_at: int | None = None
                ) -> AsyncIterator[bytes]:
    given = 0
    while given < total:
        if fail_at is not None and given >= fail_at:
            raise ConnectionResetError("peer went away")
        chunk = b"x" * min(CHUNK, total - given)
        given += len(chunk)
        client.pulled(len(chunk))
        yield chunk


@pytest.mark.parametrize("total", [100 * PART, 1000 * PART + 7])
async def test_the_writer_holds_at_most_one_part(total: int) -> None:
    client = RecordingClient()
    size = await _store(client).stream_upload("k", _body(client, total), part_size=PART)
    assert size == total == client.sent
    assert client.most_held < PART + CHUNK
    assert all(PART <= part < PART + CHUNK for part in client.parts[:-1])
    assert client.calls == ["create", "complete"]


async def test_a_body_within_one_part_is_one_put() -> None:
    client = RecordingClient()
    assert await _store(client).stream_upload("k", _body(client, PART - 1),
                                              part_size=PART) == PART - 1
    assert client.calls == ["put"]


async def test_a_broken_stream_aborts_and_completes_nothing() -> None:
    client = RecordingClient()
    with pytest.raises(ConnectionResetError):
        await _store(client).stream_upload("k", _body(client, 10 * PART, fail_at=5 * PART),
                                           part_size=PART)
    assert client.calls == ["create", "abort"]
