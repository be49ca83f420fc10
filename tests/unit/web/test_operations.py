"""The OpenAPI paths come from the routes' declarations (`web.operations`): every route
the API registers has one, an undeclared one is refused, and what a declaration leaves
out is derived from the route."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

from transcriber.domain.shapes import UserBody
from transcriber.settings import ServerSettings, Settings
from transcriber.testing.clock import FakeClock
from transcriber.web import api, keys
from transcriber.web.openapi import Route, UndeclaredRoute, api_routes, paths_of
from transcriber.web.operations import LIMIT, declare, empty, json_body, ok


def _api_app() -> web.Application:
    app = web.Application()
    app[keys.SETTINGS] = Settings()
    app[keys.CLOCK] = FakeClock()
    api.setup_api(app)
    return app


def test_every_registered_api_route_carries_a_declaration() -> None:
    routes = api_routes(_api_app().router)
    assert len(routes) >= 30
    paths = paths_of(routes, ServerSettings())
    assert sum(len(item) for item in paths.values()) == len(routes)


async def _handler(request: web.Request) -> web.Response:  # pragma: no cover - never served
    return web.Response()


def test_a_route_without_a_declaration_is_refused_by_name() -> None:
    app = _api_app()
    app.router.add_post("/app/new_thing", _handler)
    with pytest.raises(UndeclaredRoute, match=r"POST /app/new_thing \(.*_handler\)"):
        paths_of(api_routes(app.router), ServerSettings())


def test_two_routes_may_not_share_an_operation_id() -> None:
    @declare("same", "One", {204: empty("Done")})
    async def one(request: web.Request) -> web.Response:  # pragma: no cover
        return web.Response()

    @declare("same", "Two", {204: empty("Done")})
    async def two(request: web.Request) -> web.Response:  # pragma: no cover
        return web.Response()

    routes = [Route(method="GET", path="/app/one", handler=one),
              Route(method="GET", path="/app/two", handler=two)]
    with pytest.raises(UndeclaredRoute, match="same"):
        paths_of(routes, ServerSettings())


def _one(method: str, path: str, handler: Any) -> dict[str, Any]:
    paths = paths_of([Route(method=method, path=path, handler=handler)],
                     ServerSettings(page_max=70, page_default=7))
    operation = paths[path][method.lower()]
    assert isinstance(operation, dict)
    return operation


def test_what_a_declaration_leaves_out_is_derived_from_the_route() -> None:
    @declare("changeThing", "Change a thing", {200: ok("The user", UserBody),
                                               400: "A bad thing"},
             parameters=(LIMIT,), body=json_body({"type": "object"}))
    async def change(request: web.Request) -> web.Response:  # pragma: no cover
        return web.Response()

    operation = _one("PATCH", "/app/things/{thing}/parts/{part}", change)
    responses = operation["responses"]
    # The door's answers, the 403 of a state-changing call, those of a JSON body.
    assert {"401", "421", "429", "403", "408", "413", "415", "503"} <= set(responses)
    # The declared answer wins over the common one of the same status.
    assert responses["400"]["description"] == "A bad thing"
    assert responses["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/User"}
    assert responses["400"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Error"}
    # Path parameters in path order, then the declared ones; the page size from settings.
    assert [(p["name"], p["in"]) for p in operation["parameters"]] == [
        ("thing", "path"), ("part", "path"), ("limit", "query")]
    assert operation["parameters"][2]["schema"] == {
        "type": "integer", "minimum": 1, "maximum": 70, "default": 7}
    assert "security" not in operation  # the document's: proxy login or token


def test_a_v1_route_answers_openai_errors_to_a_bearer_token_only() -> None:
    @declare("readThing", "Read a thing", {200: ok("The user", UserBody), 409: "Busy"})
    async def read(request: web.Request) -> web.Response:  # pragma: no cover
        return web.Response()

    operation = _one("POST", "/v1/things", read)
    assert operation["security"] == [{"bearerToken": []}]
    responses = operation["responses"]
    assert "403" not in responses  # no cookie or proxy login: no cross-site check
    for status in ("401", "404", "409", "429"):
        assert responses[status]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/OpenAIError"}, status


def test_a_record_route_answers_the_403_of_a_refused_role() -> None:
    @declare("readRecordThing", "Read a record's thing", {200: ok("The user", UserBody)})
    async def read(request: web.Request) -> web.Response:  # pragma: no cover
        return web.Response()

    @declare("changeRecordThing", "Change a record's thing", {204: empty("Done")})
    async def change(request: web.Request) -> web.Response:  # pragma: no cover
        return web.Response()

    @declare("readOther", "Read another thing", {200: ok("The user", UserBody)})
    async def other(request: web.Request) -> web.Response:  # pragma: no cover
        return web.Response()

    read_403 = _one("GET", "/app/audiorecords/{id}/things", read)["responses"]["403"]
    assert read_403["description"].startswith("The user's role does not allow this")
    # A state-changing one keeps the cross-site 403 (derived first); nothing else gets one.
    change_403 = _one("DELETE", "/app/audiorecords/{id}", change)["responses"]["403"]
    assert change_403["description"].startswith("Cross-site request")
    assert "403" not in _one("GET", "/app/audiorecordsx/{id}", other)["responses"]


def test_a_head_of_its_own_is_described_and_one_beside_a_get_is_not() -> None:
    async def handler(request: web.Request) -> web.Response:  # pragma: no cover
        return web.Response()

    app = web.Application()
    app.router.add_get("/app/read", handler)
    app.router.add_head("/app/tus/{id}", handler)
    assert {(route.method, route.path) for route in api_routes(app.router)} == {
        ("GET", "/app/read"), ("HEAD", "/app/tus/{id}")}
    paths = paths_of(api_routes(_api_app().router), ServerSettings())
    assert paths["/app/uploads/{id}"]["head"]["operationId"] == "uploadOffset"
    assert "head" not in paths["/app/me"]
