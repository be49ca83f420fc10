"""A resumable upload's `space` metadata (issue 41 with 42): decided at creation as the
one-shot upload's `space` field is (docs/api.md, "Resumable uploads"), and the record
filed there with the uploader named in its journal; checked again at the last byte."""

from __future__ import annotations

import os
from typing import Any

from tests.helpers.tus import OCTETS, TUS, metadata
from tests.helpers.web import Client, StartApi

AUDIO = os.urandom(50_000)
SERVER = {"rate_limit_requests": 100_000}


def _as(login: str) -> dict[str, str]:
    return {"Remote-User": login}


async def _ok(response: Any, status: int) -> Any:
    assert response.status == status, await response.text()
    return await response.json() if status != 204 else None


async def _family(client: Client) -> str:
    """adam's space: eddy its editor, vera its viewer; its id."""
    space = await _ok(await client.post("/app/spaces", json={"name": "family"},
                                        headers=_as("adam")), 201)
    for login, role in (("eddy", "editor"), ("vera", "viewer")):
        await _ok(await client.post(f"/app/spaces/{space['id']}/members",
                                    json={"login": login, "role": role},
                                    headers=_as("adam")), 201)
    return str(space["id"])


async def _begin(client: Client, login: str, **pairs: str) -> Any:
    return await client.post("/app/uploads/", headers={
        **TUS, **_as(login), "Upload-Length": str(len(AUDIO)),
        "Upload-Metadata": metadata(filename="meeting.ogg", **pairs)})


async def _finish(client: Client, login: str, location: str) -> dict[str, Any]:
    """The whole file in one PATCH; the card of the record it became."""
    response = await client.patch(location, data=AUDIO, headers={
        **OCTETS, **_as(login), "Upload-Offset": "0"})
    assert response.status == 204, await response.text()
    record_id = response.headers["X-Record-Id"]
    card: dict[str, Any] = await _ok(await client.get(f"/app/audiorecords/{record_id}",
                                                      headers=_as(login)), 200)
    return card


async def test_the_space_metadata_files_the_record_there_and_is_checked_at_creation(
        start_api: StartApi) -> None:
    client = await start_api(server=SERVER)
    space_id = await _family(client)
    # Refused before a byte is sent: a viewer adds no records, a stranger sees no space.
    viewer = await _begin(client, "vera", space=space_id)
    assert viewer.status == 403
    assert (await viewer.json())["error"]["code"] == "forbidden"
    assert (await _begin(client, "sam", space=space_id)).status == 404
    assert (await _begin(client, "eddy", space="not-an-id")).status == 404

    began = await _begin(client, "eddy", space=space_id)
    assert began.status == 201, await began.text()
    card = await _finish(client, "eddy", began.headers["Location"])
    assert card["space"] == space_id
    assert [(e["step"], e["by"]) for e in card["timeline"] if e["origin"] == "human"] == [
        ("moved", "eddy")]
    # The space's other members see it.
    assert (await client.get(f"/app/audiorecords/{card['id']}",
                             headers=_as("vera"))).status == 200

    # No `space`: the uploader's default space; an empty one: their own only.
    await _ok(await client.put("/app/spaces/default", json={"space": space_id},
                               headers=_as("eddy")), 200)
    began = await _begin(client, "eddy")
    assert (await _finish(client, "eddy", began.headers["Location"]))["space"] == space_id
    began = await _begin(client, "eddy", space="")
    assert (await _finish(client, "eddy", began.headers["Location"]))["space"] is None


async def test_a_member_removed_mid_upload_gets_a_record_of_their_own(
        start_api: StartApi) -> None:
    client = await start_api(server=SERVER)
    space_id = await _family(client)
    began = await _begin(client, "eddy", space=space_id)
    assert began.status == 201
    await _ok(await client.delete(f"/app/spaces/{space_id}/members/eddy",
                                  headers=_as("adam")), 204)
    card = await _finish(client, "eddy", began.headers["Location"])
    assert card["space"] is None
    assert [e["step"] for e in card["timeline"] if e["origin"] == "human"] == []
    assert (await client.get(f"/app/audiorecords/{card['id']}",
                             headers=_as("vera"))).status == 404
