"""The OpenAPI paths of sharing (`transcriber.web.spaces`), merged by `openapi`."""

from __future__ import annotations

from typing import Any

from transcriber.web.openapi_schemas import error_doc, json_doc
from transcriber.web.operations import JSON

_SPACE_PARAM = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"},
                "description": "The space id; one the user is not a member of is 404."}
_LOGIN_PARAM = {"name": "login", "in": "path", "required": True,
                "schema": {"type": "string"}, "description": "A person's login"}
_FORBIDDEN = error_doc("The user's role does not allow this (docs/sharing.md)")


def _holder(roles: list[str]) -> dict[str, Any]:
    return {"required": True, "content": {JSON: {"schema": {
        "type": "object", "required": ["login", "role"], "additionalProperties": False,
        "properties": {"login": {"type": "string", "minLength": 1, "maxLength": 255},
                       "role": {"type": "string", "enum": roles}}}}}}


def space_paths(common: dict[str, Any], cross_site: dict[str, Any],
                json_body: dict[str, Any], record_id: dict[str, Any]) -> dict[str, Any]:
    """The paths, given the shared answers of `openapi`."""
    changing = {**common, **cross_site}
    return {
        "/app/spaces": {
            "get": {"operationId": "listSpaces",
                    "summary": "The spaces the user is a member of, with their role",
                    "responses": {"200": json_doc("The spaces", "SpaceList"), **common}},
            "post": {
                "operationId": "createSpace",
                "summary": "A new space; the user becomes its admin",
                "requestBody": {"required": True, "content": {JSON: {"schema": {
                    "type": "object", "required": ["name"], "additionalProperties": False,
                    "properties": {"name": {"type": "string", "minLength": 1,
                                            "maxLength": 64}}}}}},
                "responses": {"201": json_doc("The space", "Space"),
                              "400": error_doc("A bad name"),
                              "409": error_doc("A space of that name exists"),
                              **changing, **json_body}},
        },
        "/app/spaces/default": {"put": {
            "operationId": "setDefaultSpace",
            "summary": "The space the user's uploads go to when they name none (null: "
                       "their own)",
            "requestBody": {"required": True, "content": {JSON: {"schema": {
                "type": "object", "required": ["space"], "additionalProperties": False,
                "properties": {"space": {"type": ["string", "null"]}}}}}},
            "responses": {"200": json_doc("The spaces", "SpaceList"),
                          "400": error_doc("A bad body"), "403": _FORBIDDEN,
                          "404": error_doc("No such space of the user's"),
                          **changing, **json_body}}},
        "/app/spaces/{id}/members": {
            "get": {"operationId": "listMembers", "summary": "The space's members",
                    "parameters": [_SPACE_PARAM],
                    "responses": {"200": json_doc("The members", "ShareList"),
                                  "404": error_doc("No such space of the user's"), **common}},
            "post": {
                "operationId": "setMember",
                "summary": "Add a member or change their role (admins)",
                "parameters": [_SPACE_PARAM],
                "requestBody": _holder(["viewer", "editor", "admin"]),
                "responses": {"201": json_doc("The member", "Share"),
                              "400": error_doc("A bad login or role"), "403": _FORBIDDEN,
                              "404": error_doc("No such space of the user's"),
                              "409": error_doc("The space's last admin cannot step down"),
                              **changing, **json_body}},
        },
        "/app/spaces/{id}/members/{login}": {"delete": {
            "operationId": "removeMember",
            "summary": "Remove a member (admins; any member may leave); their records in "
                       "the space leave it with them",
            "parameters": [_SPACE_PARAM, _LOGIN_PARAM],
            "responses": {"204": {"description": "Removed"}, "403": _FORBIDDEN,
                          "404": error_doc("No such space of the user's, or not a member"),
                          "409": error_doc("The space's last admin cannot leave"),
                          **changing}}},
        "/app/audiorecords/{id}/shares": {
            "get": {"operationId": "listShares",
                    "summary": "The people the record is shared with (who may share it)",
                    "parameters": [record_id],
                    "responses": {"200": json_doc("The shares", "ShareList"),
                                  "403": _FORBIDDEN, "404": error_doc("No such record"),
                                  **common}},
            "post": {
                "operationId": "shareRecord",
                "summary": "Share the record with a person (the owner or a space admin)",
                "parameters": [record_id],
                "requestBody": _holder(["viewer", "editor"]),
                "responses": {"201": json_doc("The share", "Share"),
                              "400": error_doc("A bad login or role, or the owner"),
                              "403": _FORBIDDEN, "404": error_doc("No such record"),
                              **changing, **json_body}},
        },
        "/app/audiorecords/{id}/shares/{login}": {"delete": {
            "operationId": "unshareRecord", "summary": "Revoke a person's share",
            "parameters": [record_id, _LOGIN_PARAM],
            "responses": {"204": {"description": "Revoked"}, "403": _FORBIDDEN,
                          "404": error_doc("No such record, or not shared with that person"),
                          **changing}}},
    }



def with_forbidden(paths: dict[str, Any]) -> dict[str, Any]:
    """Every record route may answer 403: the user sees the record but their role does
    not allow this (`web.access`); a stranger gets the 404 of a record that is not."""
    for path, operations in paths.items():
        if path == "/app/audiorecords/{id}" or path.startswith("/app/audiorecords/{id}/"):
            for operation in operations.values():
                operation["responses"].setdefault("403", _FORBIDDEN)
    return paths
