"""The OpenAPI paths of asking the archive (`transcriber.web.ask`), merged by `openapi`;
the answers' schemas are generated from `domain.shapes_ask`."""

from __future__ import annotations

from typing import Any

from transcriber.domain.ask import QUESTION_MAX, RECORDS_MAX
from transcriber.web.openapi_schemas import ID, error_doc, json_doc
from transcriber.web.operations import JSON, ref

_DAY = {"type": "string", "format": "date"}
_NAME = {"type": "string", "minLength": 1, "maxLength": 64}

SCHEMAS: dict[str, Any] = {
    "AskRequest": {
        "type": "object", "required": ["question"], "additionalProperties": False,
        "properties": {
            "question": {"type": "string", "minLength": 1, "maxLength": QUESTION_MAX,
                         "description": "In any words, English or Russian; days it names "
                                        "(\"last week\", «в прошлом месяце») and speakers' "
                                        "names narrow the scope"},
            "scope": {"type": "object", "additionalProperties": False, "properties": {
                "space": {**_NAME, "description": "A space's records only"},
                "records": {"type": "array", "maxItems": RECORDS_MAX, "items": ID},
                "from": {**_DAY, "description": "The first day (UTC)"},
                "to": {**_DAY, "description": "The last day (UTC), included"},
                "speaker": {**_NAME, "description": "Only what a speaker so named said"},
                "topics": {"type": "array", "maxItems": 5, "items": _NAME},
            }},
            "conversation": {**ID, "description": "A conversation of the asker's: a "
                                                  "follow-up question"},
        },
    },
}


def ask_paths(common: dict[str, Any], cross_site: dict[str, Any],
              json_body: dict[str, Any]) -> dict[str, Any]:
    """The paths, given the shared answers of `openapi`."""
    return {
        "/app/ask": {"post": {
            "operationId": "ask",
            "summary": "A question answered from the asker's recordings, every part cited "
                       "to the moment it was said",
            "requestBody": {"required": True, "content": {JSON: {"schema": ref("AskRequest")}}},
            "responses": {
                "200": {"description": "The answer (`answer` null offline); with a language "
                                       "model and `Accept: text/event-stream`, server-sent "
                                       "events `passages` (a list of Passage) then `answer` "
                                       "(this object)",
                        "content": {JSON: {"schema": ref("Ask")},
                                    "text/event-stream": {"schema": {"type": "string"}}}},
                "400": error_doc("A bad question or scope; query_too_broad"),
                "404": error_doc("No such conversation"),
                **common, **cross_site, **json_body},
        }},
        "/app/ask/conversations/{conversation}": {
            "get": {
                "operationId": "getConversation", "summary": "A conversation's questions "
                                                             "and answers",
                "parameters": [_CONVERSATION],
                "responses": {"200": json_doc("The conversation", "Conversation"),
                              "404": error_doc("No such conversation"), **common},
            },
            "delete": {
                "operationId": "deleteConversation", "summary": "Delete a conversation",
                "parameters": [_CONVERSATION],
                "responses": {"204": {"description": "Deleted"},
                              "404": error_doc("No such conversation"), **common,
                              **cross_site},
            },
        },
    }


_CONVERSATION = {"name": "conversation", "in": "path", "required": True, "schema": ID,
                 "description": "Another person's, or anything else, is 404"}
