"""The web app's JSDoc shapes (`assets/types.js`) against the OpenAPI document the
server publishes: every field the JS declares is one the API describes, and a field
the JS reads as always there is one the API requires. So the type check
(test_js_checks.py) checks the JS against the API, not against a guess of it."""

from __future__ import annotations

import re
from typing import Any

from transcriber.settings import ServerSettings
from transcriber.web.openapi import openapi_document
from transcriber.web.spa import ASSETS_DIR

# types.js typedef → the OpenAPI component it mirrors.
COMPONENTS = {
    "Halt": "Halt", "Progress": "Progress", "Described": "Described", "Word": "Word",
    "Utterance": "Utterance", "Quality": "Quality", "Suggestion": "Suggestion",
    "Speaker": "Speaker", "FileCopy": "FileCopy", "TimelineEvent": "TimelineEvent",
    "Match": "Match", "RecordSummary": "Record", "SearchResult": "SearchResult",
    "RecordCard": "Card",
    "Voice": "Voice", "SpaceVocabulary": "SpaceVocabulary", "Token": "Token",
    "Webhook": "Webhook", "WebhookDelivery": "Delivery",
}
_BLOCK_RE = re.compile(r"/\*\*(.*?)\*/", re.S)
_PROPERTY_RE = re.compile(r"@property \{[^}]*\} (\[?)(\w+)\]?")
# The fields of an object literal type inside `{RecordSummary & { … }}`.
_LITERAL_FIELD_RE = re.compile(r"^\s*(\w+)(\??):", re.M)


def _typedef(body: str) -> tuple[str, str] | None:
    """`@typedef {KIND} Name` → (KIND, Name); KIND's braces may nest."""
    start = body.find("@typedef {")
    if start < 0:
        return None
    opening = start + len("@typedef ")
    depth, end = 0, opening
    for end in range(opening, len(body)):
        depth += {"{": 1, "}": -1}.get(body[end], 0)
        if depth == 0:
            break
    name = re.match(r"\s*(\w+)", body[end + 1:])
    assert name is not None, body
    return body[opening + 1:end], name.group(1)


def _js_shapes() -> dict[str, dict[str, bool]]:
    """typedef name → {field: required} as types.js declares it (intersections merged)."""
    shapes: dict[str, dict[str, bool]] = {}
    text = (ASSETS_DIR / "types.js").read_text()
    for block in _BLOCK_RE.findall(text):
        body = "\n".join(line.strip().removeprefix("*").rstrip() for line in block.splitlines())
        typedef = _typedef(body)
        if typedef is None:
            continue
        kind, name = typedef
        fields = {m.group(2): not m.group(1) for m in _PROPERTY_RE.finditer(body)}
        for base in re.findall(r"^(\w+) &", kind.strip()):
            fields = {**shapes[base], **fields}
        fields.update({m.group(1): not m.group(2) for m in _LITERAL_FIELD_RE.finditer(
            kind.partition("&")[2])})
        shapes[name] = fields
    return shapes


def _api_shape(schemas: dict[str, Any], name: str) -> tuple[set[str], set[str]]:
    """A component's (properties, required), `allOf` parts merged."""
    schema = schemas[name]
    properties: set[str] = set(schema.get("properties", {}))
    required: set[str] = set(schema.get("required", []))
    for part in schema.get("allOf", []):
        ref = part.get("$ref")
        inner = _api_shape(schemas, ref.rsplit("/", 1)[1]) if ref else (
            set(part.get("properties", {})), set(part.get("required", [])))
        properties |= inner[0]
        required |= inner[1]
    return properties, required


def test_types_js_parses_every_shape_it_mirrors() -> None:
    shapes = _js_shapes()
    assert set(COMPONENTS) <= set(shapes), set(COMPONENTS) - set(shapes)
    assert shapes["RecordCard"]["utterances"] is True
    assert shapes["RecordCard"]["quality"] is False
    assert shapes["RecordCard"]["id"] is True  # from RecordSummary
    assert shapes["Utterance"]["words"] is False


def test_the_js_shapes_are_the_apis() -> None:
    schemas = openapi_document(ServerSettings(), routes=())["components"]["schemas"]
    shapes = _js_shapes()
    problems = []
    for js_name, api_name in COMPONENTS.items():
        properties, required = _api_shape(schemas, api_name)
        for field, always in shapes[js_name].items():
            if field not in properties:
                problems.append(f"{js_name}.{field}: not in the API's {api_name}")
            elif always and field not in required:
                problems.append(f"{js_name}.{field}: read as always there, optional in {api_name}")
    assert not problems, problems
