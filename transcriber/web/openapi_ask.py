"""The OpenAPI request schema of asking the archive (`transcriber.web.ask`, whose routes
declare themselves), a component of `openapi`; the answers' schemas are generated from
`domain.shapes_ask`."""

from __future__ import annotations

from typing import Any

from transcriber.domain.ask import QUESTION_MAX, RECORDS_MAX
from transcriber.web.openapi_schemas import ID

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

