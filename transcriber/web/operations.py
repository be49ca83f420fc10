"""One declaration per API route: what it takes and what it answers, read by the OpenAPI
document (`openapi.paths_of`).

Every handler registered under `/app/` or `/v1/` carries one `@declare(...)`: its
operation id, summary, answers by status (a response type of `domain.shapes*`, or an
error's description), request body and parameters. What follows from the route itself
is not declared but derived when the document is built: the path's parameters not
declared here, the answers every route of its door may give (`COMMON_RESPONSES`, or
OpenAI's under `/v1/`), the 403 of a state-changing call, the answers of a route that
reads a JSON body, the error shape (`Error`, `OpenAIError` under `/v1/`). A route
without a declaration fails the document (and its test): docs/api.md, "Routes: one
declaration each".

Only plain values here: the schema library is loaded when the document is built.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

JSON = "application/json"

Handler = TypeVar("Handler", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True, kw_only=True)
class StatusDoc:
    """One documented status: a response type answered as JSON, the door's error shape,
    other media (`content`, as OpenAPI writes it), or nothing (none of the three)."""

    description: str
    shape: Any = None
    error: bool = False
    content: Mapping[str, Any] | None = None
    links: Mapping[str, Any] | None = None
    # Response headers, as OpenAPI writes them (tus's answers carry everything in them).
    headers: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Operation:
    """What one route takes and answers (see the module's docstring for what is derived)."""

    id: str
    summary: str
    answers: Mapping[int | str, StatusDoc]
    parameters: tuple[Mapping[str, Any], ...] = ()
    body: Mapping[str, Any] | None = None
    # No identity needed (the document itself): no security, only the rate limit's 429.
    public: bool = False


# Filled as the handler modules are imported, read when the document is built.
DECLARED: dict[Callable[..., Any], Operation] = {}


def declare(operation_id: str, summary: str, answers: Mapping[int | str, StatusDoc | str], *,
            parameters: tuple[Mapping[str, Any], ...] = (),
            body: Mapping[str, Any] | None = None,
            public: bool = False) -> Callable[[Handler], Handler]:
    """Declare the decorated handler's operation; a plain string answer is an error's
    description."""
    operation = Operation(
        id=operation_id, summary=summary, parameters=parameters, body=body, public=public,
        answers={status: error(answer) if isinstance(answer, str) else answer
                 for status, answer in answers.items()})

    def mark(handler: Handler) -> Handler:
        DECLARED[handler] = operation
        return handler

    return mark


def ok(description: str, shape: Any, *, links: Mapping[str, Any] | None = None) -> StatusDoc:
    """The JSON of a response type (a `domain.shapes*` class, `Page[…]`, `Items[…]`)."""
    return StatusDoc(description=description, shape=shape, links=links)


def error(description: str) -> StatusDoc:
    return StatusDoc(description=description, error=True)


def empty(description: str, *, headers: Mapping[str, Any] | None = None) -> StatusDoc:
    return StatusDoc(description=description, headers=headers)


def media(description: str, content: Mapping[str, Any]) -> StatusDoc:
    return StatusDoc(description=description, content=content)


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def json_body(schema: str | Mapping[str, Any], *, required: bool = True,
              description: str | None = None,
              example: Any = None) -> dict[str, Any]:
    """A JSON request body: a component's name (`openapi_schemas.REQUESTS`) or a schema."""
    media_type: dict[str, Any] = {
        "schema": ref(schema) if isinstance(schema, str) else dict(schema)}
    if example is not None:
        media_type["example"] = example
    body: dict[str, Any] = {"required": required, "content": {JSON: media_type}}
    if description is not None:
        body["description"] = description
    return body


def path_param(name: str, description: str | None = None) -> dict[str, Any]:
    param: dict[str, Any] = {"name": name, "in": "path", "required": True,
                             "schema": {"type": "string"}}
    if description is not None:
        param["description"] = description
    return param


def query_param(name: str, schema: Mapping[str, Any],
                description: str | None = None) -> dict[str, Any]:
    param: dict[str, Any] = {"name": name, "in": "query", "schema": dict(schema)}
    if description is not None:
        param["description"] = description
    return param


# Shared by several routes.
RECORD_ID = path_param("id", "The record id (a ULID); anything else is 404.")
LANGUAGE = {
    "name": "language", "in": "query", "required": False, "schema": {"type": "string"},
    "description": "`auto` or a code the active recognizer supports (`en`, `ru`, …); "
                   "an unknown one is 400 with the list",
}
MODEL = {
    "name": "model", "in": "query", "required": False, "schema": {"type": "string"},
    "description": "The model to recognize it with (`whisper-base`, or a name `transcriber "
                   "models list` shows); absent: `recognizer.routes` chooses; an unknown "
                   "one is 400 with the list",
}
QUERY_SYNTAX = (
    "Words match in any of their forms (Russian and English word forms, ё as е, case "
    "ignored); `word*` matches as a prefix; `\"two words\"` in that order; `-word` "
    "excludes. Every term is required.")
# The page size's bounds follow the running settings: filled in when the document is
# built (`openapi.paths_of`).
LIMIT = query_param("limit", {"type": "integer", "minimum": 1})
CURSOR = query_param("cursor", {"type": "string"}, "`next_cursor` of the previous page")
BINARY = {"type": "string", "format": "binary"}
NO_RECORD = "No such record"
# Links from an answer carrying a record's `id` to what may follow.
RECORD_LINKS = {
    name: {"operationId": operation, "parameters": {"id": "$response.body#/id"}}
    for name, operation in (("GetRecord", "getRecord"), ("DownloadFile", "downloadFile"),
                            ("DownloadTranscript", "downloadTranscript"),
                            ("ResumeRecord", "resumeRecord"), ("EditRecord", "editRecord"),
                            ("CorrectTranscript", "correctTranscript"),
                            ("RetranscribeRecord", "retranscribeRecord"))
}
