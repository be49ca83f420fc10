"""The OpenAPI 3.1 description of `/app/` and `/v1/`, served at `GET /app/openapi.json`.

Built from the routes the router holds: each handler's declaration (`operations.declare`)
gives its operation, what every route of its door answers is added here; the schemas of
the answers are generated from the response types the routes return (`domain.shapes`,
`openapi_schemas`). A route without a declaration is refused (`UndeclaredRoute`). A test
validates real responses against it and a schemathesis run fuzzes the routes from it.
Limits in it (page size) come from the running settings.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from transcriber.core.errors import TranscriberError
from transcriber.settings import ServerSettings
from transcriber.web import keys
from transcriber.web.openapi_ask import SCHEMAS as ASK_SCHEMAS
from transcriber.web.openapi_integrations import (
    APP_SECURITY,
    BEARER_ONLY,
    OPENAI_COMMON,
    SECURITY_SCHEMES,
)
from transcriber.web.openapi_integrations import SCHEMAS as INTEGRATION_SCHEMAS
from transcriber.web.openapi_links import LINK_REQUEST
from transcriber.web.openapi_schemas import (
    COMMON_RESPONSES,
    RESPONSES,
    component_schemas,
    error_doc,
)
from transcriber.web.openapi_webhooks import WEBHOOK_SCHEMAS, outgoing_webhooks
from transcriber.web.operations import (
    DECLARED,
    JSON,
    LIMIT,
    Operation,
    StatusDoc,
    declare,
    media,
    path_param,
    ref,
)
from transcriber.web.responses import json_response

_CROSS_SITE = {"403": error_doc("Cross-site request (send X-Transcriber-Client: web), or a "
                                "read token")}
# Routes that read a JSON body (jsonbody.read_json).
_JSON_BODY = {
    "408": error_doc("The body stalled or came too slowly"),
    "413": error_doc("A body larger than server.json_max_bytes"),
    "415": error_doc("Not JSON, or a compressed body (Content-Encoding)"),
    "503": error_doc("Too many request bodies arriving at once (see Retry-After)"),
}
# Every record route may answer 403: the user sees the record but their role does not
# allow this (`web.access`); a stranger gets the 404 of a record that is not.
_FORBIDDEN = error_doc("The user's role does not allow this (docs/sharing.md)")
_RECORD = "/app/audiorecords/{id}"
_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_DOORS = ("/app/", "/v1/")


class UndeclaredRoute(TranscriberError):
    """A route under `/app/` or `/v1/` whose handler carries no `@declare`, or two routes
    declaring one operation id: the document is not built (the request is a 500)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Route:
    """A registered route, as the router holds it."""

    method: str
    path: str
    handler: Callable[..., Any]


def api_routes(router: web.UrlDispatcher) -> list[Route]:
    """The routes the document describes: under `/app/` and `/v1/`, without the HEADs
    aiohttp adds to each GET (a HEAD of its own, tus's, is described)."""
    routes = [route for route in router.routes() if route.resource is not None
              and route.resource.canonical.startswith(_DOORS)]
    with_get = {route.resource for route in routes if route.method == "GET"}
    return [Route(method=route.method, path=route.resource.canonical, handler=route.handler)
            for route in routes
            if route.resource is not None
            and not (route.method == "HEAD" and route.resource in with_get)]


def undeclared(routes: Iterable[Route]) -> list[str]:
    return [f"{route.method} {route.path} ({route.handler.__module__}."
            f"{route.handler.__qualname__})"
            for route in routes if route.handler not in DECLARED]


def _answer(answer: StatusDoc, *, openai: bool, names: Mapping[Any, str]) -> dict[str, Any]:
    written: dict[str, Any] = {"description": answer.description}
    if answer.error:
        written["content"] = {JSON: {"schema": ref("OpenAIError" if openai else "Error")}}
    elif answer.shape is not None:
        written["content"] = {JSON: {"schema": ref(names[answer.shape])}}
    elif answer.content is not None:
        written["content"] = dict(answer.content)
    if answer.headers is not None:
        written["headers"] = dict(answer.headers)
    if answer.links is not None:
        written["links"] = dict(answer.links)
    return written


def _parameters(route: Route, operation: Operation,
                server: ServerSettings) -> list[dict[str, Any]]:
    declared = [dict(param) for param in operation.parameters]
    for param in declared:
        if param["name"] == LIMIT["name"] and param["in"] == "query":
            param["schema"] = {**param["schema"], "maximum": server.page_max,
                               "default": server.page_default}
    by_name = {param["name"]: param for param in declared if param["in"] == "path"}
    in_path = [by_name.get(name) or path_param(name)
               for name in re.findall(r"\{([^}/]+)\}", route.path)]
    return [*in_path, *(param for param in declared if param["in"] != "path")]


def _operation(route: Route, server: ServerSettings,
               names: Mapping[Any, str]) -> dict[str, Any]:
    operation = DECLARED[route.handler]
    openai = route.path.startswith("/v1/")
    answers: dict[str, Any] = {}
    if openai:
        answers.update(OPENAI_COMMON)
    elif operation.public:
        answers["429"] = COMMON_RESPONSES["429"]
    else:
        answers.update(COMMON_RESPONSES)
        if route.method in _CHANGING:
            answers.update(_CROSS_SITE)
        if operation.body is not None and JSON in operation.body["content"]:
            answers.update(_JSON_BODY)
    answers.update({str(status): _answer(answer, openai=openai, names=names)
                    for status, answer in operation.answers.items()})
    if route.path == _RECORD or route.path.startswith(_RECORD + "/"):
        answers.setdefault("403", _FORBIDDEN)
    written: dict[str, Any] = {"operationId": operation.id, "summary": operation.summary}
    if openai:
        written["security"] = BEARER_ONLY
    elif operation.public:
        written["security"] = []
    parameters = _parameters(route, operation, server)
    if parameters:
        written["parameters"] = parameters
    if operation.body is not None:
        written["requestBody"] = dict(operation.body)
    written["responses"] = answers
    return written


def paths_of(routes: Iterable[Route], server: ServerSettings) -> dict[str, Any]:
    """The document's `paths`, one operation per route, from the routes' declarations."""
    routes = list(routes)
    missing = undeclared(routes)
    if missing:
        raise UndeclaredRoute("routes without a declaration (add @declare, docs/api.md "
                              "\"Routes: one declaration each\"): " + ", ".join(missing))
    names = {shape: name for name, shape in RESPONSES}
    paths: dict[str, Any] = {}
    for route in routes:
        paths.setdefault(route.path, {})[route.method.lower()] = _operation(
            route, server, names)
    ids = [operation["operationId"] for item in paths.values() for operation in item.values()]
    if len(ids) != len(set(ids)):
        raise UndeclaredRoute("one operation id declared for two routes: "
                              + ", ".join(sorted({i for i in ids if ids.count(i) > 1})))
    return paths


def openapi_document(server: ServerSettings, routes: Iterable[Route]) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "transcriber archive API", "version": "1"},
        "components": {
            "schemas": {**component_schemas(), **WEBHOOK_SCHEMAS, **INTEGRATION_SCHEMAS,
                        "LinkRequest": LINK_REQUEST, **ASK_SCHEMAS},
            "securitySchemes": SECURITY_SCHEMES,
        },
        "security": APP_SECURITY,
        "paths": paths_of(routes, server),
        "webhooks": outgoing_webhooks(),
    }


@declare("openapi", "This document", {
    200: media("OpenAPI 3.1", {JSON: {"schema": {"type": "object"}}})}, public=True)
async def serve_openapi(request: web.Request) -> web.Response:
    return json_response(openapi_document(request.app[keys.SETTINGS].server,
                                          api_routes(request.app.router)))
