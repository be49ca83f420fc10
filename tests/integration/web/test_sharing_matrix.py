"""The access matrix (issue 41, docs/sharing.md): every record route of the app's own
route table × every kind of person, on both engines.

The routes are read from the running app's router, so a route added later is
in the matrix without anyone adding it here (and the app refuses to start
with a record route that names no action: `web.access.check_record_routes`).
What each person may do is written here from the roles table, not read from
`domain.access`: the test checks the service against the table.

Each call is a probe that changes nothing when it is allowed (a JSON body the
handler refuses with 400 after the access check, a resume of a record that
is not halted); a DELETE route gets a record of its own per person.
"""

from __future__ import annotations

from typing import Any

from tests.helpers.web import Client, StartApi, advance, transcribe, upload
from transcriber.domain.access import Action
from transcriber.web.access import RECORD_ACTIONS, is_record_route

VIEW = {Action.LIST, Action.OPEN, Action.LISTEN, Action.SEARCH, Action.EXPORT}
EDIT = VIEW | {Action.EDIT, Action.RETRANSCRIBE, Action.RESUME}
ADMIN = EDIT | {Action.DELETE, Action.SHARE}
OWNER = ADMIN | {Action.MOVE, Action.VOICES}

# login → what the roles table lets them do to a record of the family space.
PEOPLE: dict[str, set[Action]] = {
    "olga": OWNER,   # uploaded the record
    "adam": ADMIN,   # the space's admin
    "eddy": EDIT,    # the space's editor
    "vera": VIEW,    # the space's viewer
    "eric": EDIT,    # the record shared with him as editor
    "dora": VIEW,    # the record shared with her as viewer
    "sam": set(),    # a stranger
    "rita": set(),   # a member who was removed
}
PROBE_BODY = {"__probe__": True}
# One address asks for everyone here: no rate limit in the way of the matrix.
SERVER = {"rate_limit_requests": 100_000}


def _as(login: str) -> dict[str, str]:
    return {"Remote-User": login}


async def _ok(response: Any, status: int) -> Any:
    assert response.status == status, await response.text()
    return await response.json() if status != 204 else None


async def _family(client: Client) -> str:
    """The space with its members (rita added, then removed); its id."""
    space = await _ok(await client.post("/app/spaces", json={"name": "family"},
                                        headers=_as("adam")), 201)
    for login, role in (("olga", "editor"), ("eddy", "editor"), ("vera", "viewer"),
                        ("rita", "viewer")):
        await _ok(await client.post(f"/app/spaces/{space['id']}/members",
                                    json={"login": login, "role": role},
                                    headers=_as("adam")), 201)
    await _ok(await client.delete(f"/app/spaces/{space['id']}/members/rita",
                                  headers=_as("adam")), 204)
    return str(space["id"])


async def _record(client: Client, space_id: str) -> str:
    """A finished record of olga's, in the space, shared with eric and dora."""
    record_id = str((await upload(client, headers=_as("olga")))["id"])
    await transcribe(client, record_id)
    await advance(client, record_id)  # done
    await _ok(await client.patch(f"/app/audiorecords/{record_id}", json={"space": space_id},
                                 headers=_as("olga")), 200)
    for login, role in (("eric", "editor"), ("dora", "viewer")):
        await _ok(await client.post(f"/app/audiorecords/{record_id}/shares",
                                    json={"login": login, "role": role},
                                    headers=_as("olga")), 201)
    return record_id


def _url(pattern: str, record_id: str) -> str:
    return pattern.replace("{id}", record_id).replace("{speaker}", "S1") \
        .replace("{login}", "dora").replace("{link_id}", "01j00000000000000000000000")


async def _call(client: Client, method: str, pattern: str, record_id: str,
                login: str) -> Any:
    kwargs: dict[str, Any] = {"headers": _as(login)}
    if method in ("POST", "PATCH", "PUT"):
        kwargs["json"] = PROBE_BODY
    return await client.request(method, _url(pattern, record_id), **kwargs)


async def test_every_record_route_answers_each_person_as_their_role_allows(
        start_api: StartApi) -> None:
    client = await start_api(server=SERVER)
    space_id = await _family(client)
    record_id = await _record(client, space_id)
    missing = "01j0000000000000000000000z"
    routes = sorted({(route.method, route.resource.canonical)
                     for route in client.app.router.routes()
                     if route.resource is not None and route.method != "HEAD"
                     and is_record_route(route.resource.canonical)})
    assert len(routes) >= 14  # the record routes of the time, at least
    seen: list[tuple[str, str, str, int]] = []
    for method, pattern in routes:
        action = RECORD_ACTIONS[(method, pattern)]
        absent = await _call(client, method, pattern, missing, "olga")
        not_found = (absent.status, await absent.json())
        assert not_found[0] == 404
        for login, allowed in PEOPLE.items():
            target = await _record(client, space_id) if method == "DELETE" else record_id
            response = await _call(client, method, pattern, target, login)
            body = await response.read()
            seen.append((method, pattern, login, response.status))
            where = f"{method} {pattern} as {login}: {response.status} {body[:200]!r}"
            if not (allowed & VIEW):
                # A stranger learns nothing: the very answer of a record that is not.
                assert (response.status, await response.json()) == not_found, where
            elif action not in allowed:
                assert response.status == 403, where
                assert (await response.json())["error"]["code"] == "forbidden", where
            else:
                assert response.status not in (401, 403), where
                if response.status == 404:  # allowed, and the route's own thing is absent
                    assert (await response.json())["error"]["message"] != \
                        not_found[1]["error"]["message"], where
    assert len(seen) == len(routes) * len(PEOPLE)


async def test_lists_and_search_hold_exactly_what_each_person_may_see(
        start_api: StartApi) -> None:
    client = await start_api(server=SERVER)
    space_id = await _family(client)
    record_id = await _record(client, space_id)
    own = str((await upload(client, headers=_as("sam")))["id"])
    for login, allowed in PEOPLE.items():
        listed = await _ok(await client.get("/app/audiorecords", headers=_as(login)), 200)
        ids = {item["id"] for item in listed["items"]}
        assert (record_id in ids) == bool(allowed), login
        assert (own in ids) == (login == "sam"), login
        found = await _ok(await client.get("/app/audiorecords", params={"q": "budget"},
                                           headers=_as(login)), 200)
        assert [item["id"] for item in found["items"]] == ([record_id] if allowed else []), \
            login
    # The filters: mine, shared with me, one space of mine.
    def ids_of(body: dict[str, Any]) -> list[str]:
        return [item["id"] for item in body["items"]]

    async def scoped(login: str, scope: str, q: str = "") -> list[str]:
        params = {"scope": scope, **({"q": q} if q else {})}
        return ids_of(await _ok(await client.get("/app/audiorecords", params=params,
                                                 headers=_as(login)), 200))

    assert await scoped("olga", "mine") == [record_id]
    assert await scoped("eddy", "mine") == []
    assert await scoped("dora", "shared") == [record_id]
    assert await scoped("dora", "shared", "budget") == [record_id]
    assert await scoped("vera", "shared") == []
    assert await scoped("vera", f"space:{space_id}") == [record_id]
    assert await scoped("vera", f"space:{space_id}", "budget") == [record_id]
    for login in ("sam", "rita", "dora"):  # not members: the space does not exist for them
        response = await client.get("/app/audiorecords", params={"scope": f"space:{space_id}"},
                                    headers=_as(login))
        assert response.status == 404, login
    # Moved out of the space: its members no longer see it; the direct shares stay.
    await _ok(await client.patch(f"/app/audiorecords/{record_id}", json={"space": None},
                                 headers=_as("olga")), 200)
    for login in ("adam", "eddy", "vera"):
        listed = await _ok(await client.get("/app/audiorecords", headers=_as(login)), 200)
        assert record_id not in ids_of(listed), login
        assert (await client.get(f"/app/audiorecords/{record_id}",
                                 headers=_as(login))).status == 404
    assert (await client.get(f"/app/audiorecords/{record_id}",
                             headers=_as("dora"))).status == 200


async def test_the_journal_names_who_did_each_change(start_api: StartApi) -> None:
    client = await start_api(server=SERVER)
    space_id = await _family(client)
    record_id = await _record(client, space_id)
    await _ok(await client.patch(f"/app/audiorecords/{record_id}", json={"title": "Budget"},
                                 headers=_as("eddy")), 200)
    card = await _ok(await client.get(f"/app/audiorecords/{record_id}",
                                      headers=_as("eric")), 200)
    revision = card["revision"]
    await _ok(await client.patch(
        f"/app/audiorecords/{record_id}/transcript",
        json={"revision": revision, "utterances": [{"index": 0, "text": "Hello, archive."}]},
        headers=_as("eric")), 200)
    await _ok(await client.delete(f"/app/audiorecords/{record_id}/shares/dora",
                                  headers=_as("adam")), 204)
    await _ok(await client.post(f"/app/audiorecords/{record_id}/retranscribe",
                                headers=_as("eddy")), 200)
    card = await _ok(await client.get(f"/app/audiorecords/{record_id}",
                                      headers=_as("olga")), 200)
    human = [(e["step"], e["by"]) for e in card["timeline"] if e["origin"] == "human"]
    assert human == [("moved", "olga"), ("shared", "olga"), ("shared", "olga"),
                     ("edited", "eddy"), ("transcript_corrected", "eric"),
                     ("unshared", "adam"), ("retranscribe", "eddy")]
    assert all(e["by"] is None for e in card["timeline"] if e["origin"] == "pipeline")
    assert card["role"] == "owner"
    assert card["space"] == space_id
    assert [s["login"] for s in card["shares"]] == ["eric"]
    viewer_card = await _ok(await client.get(f"/app/audiorecords/{record_id}",
                                             headers=_as("vera")), 200)
    assert viewer_card["role"] == "viewer"
    assert viewer_card["shares"] is None
    # The revoked share is a stranger's 404 now.
    assert (await client.get(f"/app/audiorecords/{record_id}",
                             headers=_as("dora"))).status == 404


async def test_uploads_go_to_the_space_asked_for_or_the_default_one(
        start_api: StartApi) -> None:
    client = await start_api(server=SERVER)
    space_id = await _family(client)
    refused = await client.post(f"/app/audiorecords?space={space_id}", data=b"RIFF audio",
                                headers={**_as("vera"), "X-Filename": "a.wav"})
    assert refused.status == 403  # a viewer files nothing into the space
    strange = await client.post(f"/app/audiorecords?space={space_id}", data=b"RIFF audio",
                                headers={**_as("sam"), "X-Filename": "a.wav"})
    assert strange.status == 404
    response = await client.post(f"/app/audiorecords?space={space_id}", data=b"RIFF audio",
                                 headers={**_as("eddy"), "X-Filename": "a.wav"})
    assert (await _ok(response, 201))["space"] == space_id
    assert (await upload(client, headers=_as("eddy")))["space"] is None
    spaces = await _ok(await client.put("/app/spaces/default", json={"space": space_id},
                                        headers=_as("eddy")), 200)
    assert [(s["id"], s["default"]) for s in spaces["items"]] == [(space_id, True)]
    assert (await upload(client, headers=_as("eddy")))["space"] == space_id
    own = await client.post("/app/audiorecords?space=", data=b"RIFF audio",
                            headers={**_as("eddy"), "X-Filename": "a.wav"})
    assert (await _ok(own, 201))["space"] is None
    assert (await client.put("/app/spaces/default", json={"space": space_id},
                             headers=_as("vera"))).status == 403


async def test_a_removed_members_records_leave_the_space_with_them(
        start_api: StartApi) -> None:
    client = await start_api(server=SERVER)
    space_id = await _family(client)
    await _ok(await client.post(f"/app/spaces/{space_id}/members",
                                json={"login": "rita", "role": "editor"},
                                headers=_as("adam")), 201)
    response = await client.post(f"/app/audiorecords?space={space_id}", data=b"RIFF audio",
                                 headers={**_as("rita"), "X-Filename": "a.wav"})
    record_id = (await _ok(response, 201))["id"]
    assert (await client.get(f"/app/audiorecords/{record_id}",
                             headers=_as("vera"))).status == 200
    # Only an admin removes another member; the last admin stays.
    assert (await client.delete(f"/app/spaces/{space_id}/members/rita",
                                headers=_as("eddy"))).status == 403
    assert (await client.delete(f"/app/spaces/{space_id}/members/adam",
                                headers=_as("adam"))).status == 409
    await _ok(await client.delete(f"/app/spaces/{space_id}/members/rita",
                                  headers=_as("adam")), 204)
    assert (await client.get(f"/app/audiorecords/{record_id}",
                             headers=_as("vera"))).status == 404
    card = await _ok(await client.get(f"/app/audiorecords/{record_id}",
                                      headers=_as("rita")), 200)
    assert card["space"] is None
    assert [(e["step"], e["by"]) for e in card["timeline"] if e["origin"] == "human"] == [
        ("moved", "rita"), ("moved", "adam")]
    spaces = await _ok(await client.get("/app/spaces", headers=_as("rita")), 200)
    assert spaces["items"] == []
