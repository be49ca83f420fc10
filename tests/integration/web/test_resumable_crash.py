"""Resumable uploads: the server dies right after the finished upload became a record
(issue 42, the crash window), and the client's retry makes no second record.

The fault is injected at the exact point: the one-shot upload's intake (`store`) has
committed the record, and the process goes no further (no answer, no partial file
removed). The next server on the same data folder answers the retry (`HEAD`, or the
last `PATCH` again) with that record. Were the upload's mark a second transaction
after the record, the retry would find an upload complete and unmarked, and make
the record again: this test would count two.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.tus import OCTETS, TUS, create, no_partials
from tests.helpers.web import StartApi, stored_files
from transcriber.web import uploads
from transcriber.web.upload import store as real_store

DATA = b"a" * 1000


class Died(Exception):
    """The server's process ends here (nothing after this point runs)."""


async def test_a_server_dying_after_the_record_leaves_one_record_on_retry(
        start_api: StartApi, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []

    async def store_then_die(*args: object, **kwargs: object) -> object:
        accepted = await real_store(*args, **kwargs)  # type: ignore[arg-type]
        made.append(accepted.record_id)
        raise Died

    monkeypatch.setattr(uploads, "store", store_then_die)
    client = await start_api()
    location = await create(client, len(DATA))
    last = await client.patch(location, data=DATA, headers={**OCTETS, "Upload-Offset": "0"})
    assert last.status == 500
    assert len(made) == 1
    await client.close()
    monkeypatch.setattr(uploads, "store", real_store)

    # The next server: the retry learns the record that was made, and makes none.
    client = await start_api()
    head = await client.head(location, headers=TUS)
    assert head.status == 200
    assert head.headers["X-Record-Id"] == made[0]
    again = await client.patch(location, data=b"", headers={
        **OCTETS, "Upload-Offset": str(len(DATA))})
    assert again.status == 204
    assert again.headers["X-Record-Id"] == made[0]
    listed = await (await client.get("/app/audiorecords")).json()
    assert [item["id"] for item in listed["items"]] == made
    assert len(stored_files(data_dir)) == 1
    # The partial file the dead server left is removed by the retry's HEAD.
    no_partials(data_dir)
