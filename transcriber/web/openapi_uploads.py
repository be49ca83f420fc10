"""The OpenAPI paths of resumable uploads (tus 1.0, `transcriber.web.uploads`), merged by
`openapi`. The protocol is tus's (https://tus.io/protocols/resumable-upload): its
headers carry everything, and only errors answer a body."""

from __future__ import annotations

from typing import Any

from transcriber.web.openapi_schemas import error_doc

_VERSION = {"name": "Tus-Resumable", "in": "header", "required": True,
            "schema": {"type": "string", "enum": ["1.0.0"]},
            "description": "The protocol's version; anything else is 412"}
_UPLOAD_PARAM = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"},
                 "description": "The upload's id (the last part of its Location); another "
                                "person's, or anything else, is 404."}
_COUNT = {"type": "string", "pattern": "^[0-9]{1,19}$"}
_STATE = {
    "Upload-Offset": {"schema": _COUNT, "description": "Bytes stored for good"},
    "Upload-Length": {"schema": _COUNT, "description": "Bytes declared at creation"},
    "Upload-Expires": {"schema": {"type": "string"},
                       "description": "When the upload is removed unless a PATCH renews it "
                                      "(an HTTP date)"},
    "X-Record-Id": {"schema": {"type": "string"},
                    "description": "Once complete: the record the upload became"},
}
_VERSION_ERROR = {"412": error_doc("Tus-Resumable missing or not 1.0.0 (Tus-Version says "
                                   "which is spoken)")}


def upload_paths(common: dict[str, Any], cross_site: dict[str, Any]) -> dict[str, Any]:
    """The paths, given the shared answers of `openapi`."""
    known = {**common, **_VERSION_ERROR}
    return {
        "/app/uploads/": {
            "options": {
                "operationId": "uploadsProtocol", "summary": "What the tus server offers",
                "responses": {"204": {"description": "Tus-Version, Tus-Extension, "
                                                     "Tus-Max-Size, Tus-Checksum-Algorithm"},
                              **common},
            },
            "post": {
                "operationId": "createUpload",
                "summary": "Begin a resumable upload of Upload-Length bytes (no body)",
                "parameters": [
                    _VERSION,
                    {"name": "Upload-Length", "in": "header", "required": False,
                     "schema": _COUNT, "description": "Required unless deferred"},
                    {"name": "Upload-Defer-Length", "in": "header", "required": False,
                     "schema": {"type": "string", "enum": ["1"]},
                     "description": "The length is not known yet (a recording going on): "
                                    "a later PATCH names it in Upload-Length"},
                    {"name": "Upload-Metadata", "in": "header", "required": False,
                     "schema": {"type": "string"},
                     "description": "`key base64(value)` pairs, comma-separated: `filename`, "
                                    "optional `language` and `space`"},
                ],
                "responses": {
                    "201": {"description": "Created; Location names the upload",
                            "headers": {"Location": {"schema": {"type": "string"}},
                                        "Upload-Expires": _STATE["Upload-Expires"]}},
                    "400": error_doc("Malformed Upload-Length or Upload-Metadata, an empty "
                                     "file, an unknown language, or a body"),
                    "413": error_doc("Upload-Length above the largest upload"),
                    "429": error_doc("Rate limited, or too many unfinished uploads "
                                     "(too_many_open_uploads)"),
                    "507": error_doc("No room for the file now"),
                    **{k: v for k, v in known.items() if k not in ("400", "429")},
                    **cross_site,
                },
            },
        },
        "/app/uploads/{id}": {
            "head": {
                "operationId": "uploadOffset", "summary": "Where the upload stands",
                "parameters": [_VERSION, _UPLOAD_PARAM],
                "responses": {"200": {"description": "The stored offset", "headers": _STATE},
                              "404": {"description": "No such upload"},
                              "410": {"description": "The upload expired"}, **known},
            },
            "patch": {
                "operationId": "appendToUpload",
                "summary": "Append bytes at Upload-Offset, which must be the stored offset",
                "parameters": [
                    _VERSION, _UPLOAD_PARAM,
                    {"name": "Upload-Offset", "in": "header", "required": True,
                     "schema": _COUNT},
                    {"name": "Upload-Length", "in": "header", "required": False,
                     "schema": _COUNT,
                     "description": "A deferred upload's length, named once"},
                    {"name": "Upload-Checksum", "in": "header", "required": False,
                     "schema": {"type": "string"},
                     "description": "`sha1|md5|sha256 base64(digest)` of this body: kept "
                                    "only if it matches (460 otherwise)"},
                ],
                "requestBody": {"required": True, "content": {
                    "application/offset+octet-stream": {
                        "schema": {"type": "string", "format": "binary"}}}},
                "responses": {
                    "204": {"description": "Stored; the last one carries X-Record-Id",
                            "headers": _STATE},
                    "400": error_doc("Malformed headers, or the body ended early"),
                    "404": error_doc("No such upload"),
                    "408": error_doc("The body stalled (what arrived is kept)"),
                    "409": error_doc("Upload-Offset is not the stored offset (the answer's "
                                     "Upload-Offset is), or another PATCH is writing"),
                    "410": error_doc("The upload expired, or its bytes are gone"),
                    "413": error_doc("The body goes past Upload-Length; or, complete, the "
                                     "recording is too long"),
                    "415": error_doc("Not application/offset+octet-stream, a content coding, "
                                     "or, complete, not audio the service takes"),
                    "429": error_doc("Rate limited, too many uploads at once, or, complete, "
                                     "over the quota of queued audio"),
                    "460": error_doc("The body does not match Upload-Checksum"),
                    "503": error_doc("Too many uploads arriving, or the file could not be "
                                     "examined now (the upload stays; try again)"),
                    "507": error_doc("No room for the bytes now"),
                    **{k: v for k, v in known.items() if k not in ("400", "429")},
                    **cross_site,
                },
            },
            "delete": {
                "operationId": "terminateUpload",
                "summary": "End the upload and remove its bytes (a record it became stays)",
                "parameters": [_VERSION, _UPLOAD_PARAM],
                "responses": {"204": {"description": "Removed"},
                              "404": error_doc("No such upload"),
                              "409": error_doc("A PATCH is writing it"),
                              "410": error_doc("The upload expired"), **known, **cross_site},
            },
        },
    }
