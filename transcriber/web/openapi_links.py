"""The OpenAPI paths of a record's links for people outside (`transcriber.web.links`),
merged by `openapi`. The public page itself (`/s/<secret>`) is HTML outside `/app/`
and is described in docs/sharing.md, not here."""

from __future__ import annotations

from typing import Any

from transcriber.web.openapi_schemas import error_doc, json_doc
from transcriber.web.operations import JSON

_LINK_PARAM = {"name": "link_id", "in": "path", "required": True,
               "schema": {"type": "string"},
               "description": "The link id (from the list); another record's is 404."}

LINK_REQUEST: dict[str, Any] = {
    "type": "object", "additionalProperties": False,
    "properties": {
        "expires_in_days": {"type": "integer", "minimum": 1,
                            "description": "Days the link opens (default 7, at most "
                                           "links.max_days)"},
        "audio": {"type": "boolean", "description": "The page has the player (default "
                                                    "false: the transcript only)"},
    },
}


def link_paths(common: dict[str, Any], cross_site: dict[str, Any],
               json_body: dict[str, Any], record_id: dict[str, Any]) -> dict[str, Any]:
    """The paths, given the shared answers of `openapi`."""
    not_record = error_doc("No such record of this user")
    return {
        "/app/audiorecords/{id}/links": {
            "get": {
                "operationId": "listLinks",
                "summary": "The record's links for people outside, newest first, with how "
                           "often each was opened (never their URLs)",
                "parameters": [record_id],
                "responses": {"200": json_doc("The links", "LinkList"), "404": not_record,
                              **common},
            },
            "post": {
                "operationId": "createLink",
                "summary": "Make a link to a read-only page of the record; the answer shows "
                           "its URL, this once",
                "parameters": [record_id],
                "requestBody": {"required": True, "content": {
                    JSON: {"schema": {"$ref": "#/components/schemas/LinkRequest"}}}},
                "responses": {
                    **common, **cross_site, **json_body,
                    "201": json_doc("The link, with `url`", "NewLink"),
                    "400": error_doc("Unknown field, a bad expires_in_days or audio"),
                    "404": not_record,
                    "409": error_doc("The record holds the most links one may "
                                     "(links.per_record_max)"),
                },
            },
        },
        "/app/audiorecords/{id}/links/{link_id}": {"delete": {
            "operationId": "revokeLink",
            "summary": "Revoke a link: its page answers 404 from the next request on",
            "parameters": [record_id, _LINK_PARAM],
            "responses": {"204": {"description": "Revoked"},
                          "404": error_doc("No such record of this user, or no such link "
                                           "of the record"),
                          **common, **cross_site},
        }},
    }
