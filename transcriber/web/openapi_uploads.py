"""The OpenAPI pieces of resumable uploads (tus 1.0, `transcriber.web.uploads`), read by
the routes' declarations. The protocol is tus's (https://tus.io/protocols/resumable-upload):
its headers carry everything, and only errors answer a body."""

from __future__ import annotations

from typing import Any

from transcriber.web.operations import StatusDoc, empty, path_param

VERSION = {"name": "Tus-Resumable", "in": "header", "required": True,
           "schema": {"type": "string", "enum": ["1.0.0"]},
           "description": "The protocol's version; anything else is 412"}
UPLOAD_ID = path_param("id", "The upload's id (the last part of its Location); another "
                             "person's, or anything else, is 404.")
COUNT = {"type": "string", "pattern": "^[0-9]{1,19}$"}
STATE: dict[str, Any] = {
    "Upload-Offset": {"schema": COUNT, "description": "Bytes stored for good"},
    "Upload-Length": {"schema": COUNT, "description": "Bytes declared at creation"},
    "Upload-Expires": {"schema": {"type": "string"},
                       "description": "When the upload is removed unless a PATCH renews it "
                                      "(an HTTP date)"},
    "X-Record-Id": {"schema": {"type": "string"},
                    "description": "Once complete: the record the upload became"},
}
VERSION_ERROR = "Tus-Resumable missing or not 1.0.0 (Tus-Version says which is spoken)"
CREATE_HEADERS = (
    {"name": "Upload-Length", "in": "header", "required": False, "schema": COUNT,
     "description": "Required unless deferred"},
    {"name": "Upload-Defer-Length", "in": "header", "required": False,
     "schema": {"type": "string", "enum": ["1"]},
     "description": "The length is not known yet (a recording going on): a later PATCH "
                    "names it in Upload-Length"},
    {"name": "Upload-Metadata", "in": "header", "required": False,
     "schema": {"type": "string"},
     "description": "`key base64(value)` pairs, comma-separated: `filename`, optional "
                    "`language` and `space`"},
)
PATCH_HEADERS = (
    {"name": "Upload-Offset", "in": "header", "required": True, "schema": COUNT},
    {"name": "Upload-Length", "in": "header", "required": False, "schema": COUNT,
     "description": "A deferred upload's length, named once"},
    {"name": "Upload-Checksum", "in": "header", "required": False,
     "schema": {"type": "string"},
     "description": "`sha1|md5|sha256 base64(digest)` of this body: kept only if it "
                    "matches (460 otherwise)"},
)
PATCH_BODY = {"required": True, "content": {"application/offset+octet-stream": {
    "schema": {"type": "string", "format": "binary"}}}}
# A PATCH's answers: every status of the protocol and of the one-shot upload's intake.
PATCH_ANSWERS: dict[int | str, StatusDoc | str] = {
    204: empty("Stored; the last one carries X-Record-Id", headers=STATE),
    400: "Malformed headers, or the body ended early", 404: "No such upload",
    408: "The body stalled (what arrived is kept)",
    409: "Upload-Offset is not the stored offset (the answer's Upload-Offset is), or another "
         "PATCH is writing",
    410: "The upload expired, or its bytes are gone", 412: VERSION_ERROR,
    413: "The body goes past Upload-Length; or, complete, the recording is too long",
    415: "Not application/offset+octet-stream, a content coding, or, complete, not audio the "
         "service takes",
    429: "Rate limited, too many uploads at once, or, complete, over the quota of queued audio",
    460: "The body does not match Upload-Checksum",
    503: "Too many uploads arriving, or the file could not be examined now (the upload stays; "
         "try again)",
    507: "No room for the bytes now",
}
