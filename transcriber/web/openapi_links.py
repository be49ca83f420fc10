"""The OpenAPI request schema of a record's links for people outside
(`transcriber.web.links`, whose routes declare themselves), a component of `openapi`.
The public page itself (`/s/<secret>`) is HTML outside `/app/` and is described in
docs/sharing.md, not here."""

from __future__ import annotations

from typing import Any

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

