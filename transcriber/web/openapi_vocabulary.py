"""The OpenAPI paths of the vocabulary (`transcriber.web.vocabulary`), merged by `openapi`."""

from __future__ import annotations

from typing import Any

from transcriber.web.openapi_schemas import error_doc, json_doc
from transcriber.web.operations import JSON


def vocabulary_paths(common: dict[str, Any], cross_site: dict[str, Any],
                     json_body: dict[str, Any]) -> dict[str, Any]:
    """The paths, given the shared answers of `openapi`."""
    return {"/app/vocabulary": {
        "get": {
            "operationId": "getVocabulary",
            "summary": "The names and terms the recognizer is told for the person's records",
            "responses": {"200": json_doc("The vocabulary", "Vocabulary"), **common},
        },
        "put": {
            "operationId": "putVocabulary",
            "summary": "Replace the person's terms (names of people, companies, products)",
            "requestBody": {"required": True, "content": {JSON: {"schema": {
                "type": "object", "required": ["terms"], "additionalProperties": False,
                "properties": {"terms": {"type": "array", "maxItems": 200, "items": {
                    "type": "string", "maxLength": 64}}}}}}},
            "responses": {"200": json_doc("The vocabulary as kept", "Vocabulary"),
                          "400": error_doc("Not a list of at most 200 short strings"),
                          **common, **cross_site, **json_body},
        },
    }}
