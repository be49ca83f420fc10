"""The components of the OpenAPI document: the schemas of what `/app/` answers, generated
from the response types (`domain.shapes`), and of the request bodies it takes.

pydantic writes the JSON Schema of each shape (`TypeAdapter` reads stdlib
dataclasses, so the shapes stay plain dataclasses that orjson writes); it is
imported here only when `component_schemas` runs, i.e. when the document is
built, so the service's start-up never loads it (docs/api.md, "Shapes").
"""

from __future__ import annotations

import functools
from typing import Any

from transcriber.domain import shapes as s
from transcriber.domain import shapes_ask as a
from transcriber.domain import shapes_integrations as i
from transcriber.domain import shapes_links as sl
from transcriber.domain import shapes_live as sv
from transcriber.domain import shapes_people as sp
from transcriber.domain import shapes_search as ss
from transcriber.web.operations import JSON, ref


def json_doc(description: str, schema_name: str) -> dict[str, Any]:
    """A response answering the JSON of a named schema."""
    return {"description": description, "content": {JSON: {"schema": ref(schema_name)}}}


def error_doc(description: str) -> dict[str, Any]:
    """A response answering the error shape (`Error`)."""
    return json_doc(description, "Error")


# What any `/app/` route may answer, whatever it does.
COMMON_RESPONSES = {
    "400": error_doc("Bad request (for every route: a malformed identity header)"),
    "401": error_doc("No identity, or a bearer token that is invalid, expired or revoked"),
    "421": error_doc("Host is not one this service answers for (server.allowed_hosts)"),
    "429": error_doc("Rate limited (see Retry-After)"),
}


# For the hand-written request bodies: the shapes' own patterns.
ID = {"type": "string", "pattern": s.ID_PATTERN}
SPEAKER = s.SPEAKER

# What `/app/` answers, by component name (the document's `$ref`s). A shape nested in
# these and not named here is the component of its class name without `Body`.
RESPONSES: tuple[tuple[str, Any], ...] = (
    ("Error", s.ErrorBody), ("User", s.UserBody), ("Halt", s.HaltBody),
    ("Progress", s.ProgressBody), ("Record", s.RecordBody), ("Quality", s.QualityBody),
    ("Word", s.WordBody), ("Described", s.DescribedBody), ("Topic", s.TopicBody),
    ("TopicList", s.Page[s.TopicBody]),
    ("RecordPage", s.Page[ss.SearchResultBody | s.RecordBody]),
    ("SearchResult", ss.SearchResultBody), ("Match", ss.MatchBody),
    ("MatchList", ss.MatchListBody), ("FileCopy", s.FileCopyBody),
    ("Utterance", s.UtteranceBody), ("Speaker", s.SpeakerBody),
    ("Suggestion", s.SuggestionBody), ("Voice", sp.VoiceBody),
    ("VoiceList", s.Items[sp.VoiceBody]), ("TimelineEvent", s.TimelineEventBody),
    ("Vocabulary", sp.VocabularyBody), ("SpaceVocabulary", sp.SpaceVocabularyBody),
    ("Card", s.CardBody), ("Space", sp.SpaceBody), ("SpaceList", s.Items[sp.SpaceBody]),
    ("Share", s.ShareBody), ("ShareList", s.Items[s.ShareBody]),
    ("Webhook", i.WebhookBody), ("WebhookCreated", i.WebhookCreatedBody),
    ("WebhookList", s.Items[i.WebhookBody]), ("Delivery", i.DeliveryBody),
    ("DeliveryList", i.DeliveryListBody), ("WebhookPayload", i.WebhookPayloadBody),
    ("Token", i.TokenBody), ("NewToken", i.NewTokenBody),
    ("TokenList", s.Items[i.TokenBody]), ("OpenAIError", i.OpenAIErrorBody),
    ("Transcription", i.TranscriptionBody),
    ("TranscriptionVerbose", i.TranscriptionVerboseBody),
    ("TranscriptionDiarized", i.TranscriptionDiarizedBody),
    ("TranscriptionDiarizedSegment", i.TranscriptionDiarizedSegmentBody),
    ("TranscriptionWord", i.TranscriptionWordBody),
    ("TranscriptionSegment", i.TranscriptionSegmentBody),
    ("Model", i.ModelBody), ("ModelList", i.ModelListBody),
    ("Link", sl.LinkBody), ("NewLink", sl.NewLinkBody), ("LinkList", s.Items[sl.LinkBody]),
    ("Ask", a.AskBody), ("Passage", a.PassageBody), ("Citation", a.CitationBody),
    ("AskLine", a.AskLineBody), ("Conversation", a.ConversationBody),
    ("ConversationTurn", a.ConversationTurnBody),
    ("ConversationList", s.Page[a.ConversationSummaryBody]),
    ("LiveText", sv.LiveTextBody),
)

# What `/app/` takes: request bodies, written as JSON Schema (a route reads them with
# its own checks; `jsonbody.read_json`).
REQUESTS: dict[str, Any] = {
    "RecordEdit": {
        "type": "object",
        "additionalProperties": False,
        "minProperties": 1,
        "properties": {
            "title": {"type": "string", "maxLength": 255,
                      "description": "Becomes the person's (`described.title` human, even "
                                     "empty): the describer never writes it again"},
            "brief": {"type": "string", "maxLength": 2000,
                      "description": "Becomes the person's, like the title"},
            "topics": {"type": "array", "maxItems": 5, "description":
                       "The record's topics (replaces them; they become the person's, like "
                       "the title); the owner's names, created on first use",
                       "items": {"type": "string", "minLength": 1, "maxLength": 64}},
            "speakers": {"type": "object", "minProperties": 1, "maxProperties": 99,
                         "propertyNames": {"pattern": SPEAKER},
                         "additionalProperties": {"type": "string", "maxLength": 64},
                         "description": "Names of the transcript's speakers by label "
                                        "(an empty name takes it away); a label the "
                                        "transcript does not have is a 400"},
            "space": {"type": ["string", "null"], "description":
                      "Into this space (the record's owner, an editor or admin there), or "
                      "out of any (null); docs/sharing.md"},
        },
    },
    "TranscriptEdit": {
        "type": "object",
        "required": ["revision", "utterances"],
        "additionalProperties": False,
        "properties": {
            "revision": {"type": "integer", "minimum": 0,
                         "description": "The card's `revision` the correction was made on"},
            "utterances": {"type": "array", "minItems": 1, "items": {
                "type": "object", "required": ["index"], "additionalProperties": False,
                "properties": {"index": {"type": "integer", "minimum": 0},
                               "text": {"type": "string", "maxLength": 5000},
                               "speaker": {"type": "string", "pattern": SPEAKER,
                                           "description": "Move the line to another of "
                                                          "the record's speakers"}},
            }},
        },
    },
}


def generated_schemas(shapes: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    """The JSON Schema of each shape and of every shape inside them, by component name."""
    from pydantic import TypeAdapter  # noqa: PLC0415 - loaded when the document is built
    from pydantic.json_schema import GenerateJsonSchema  # noqa: PLC0415

    class Generate(GenerateJsonSchema):
        # A property's title would only repeat its name; a shape's class name is not
        # its component name.
        def field_title_should_be_set(self, schema: Any) -> bool:
            return False

        # A field that may be absent says so by not being required, not by a default.
        def default_schema(self, schema: Any) -> Any:
            return self.generate_inner(schema["schema"])

        def dataclass_schema(self, schema: Any) -> Any:
            generated = super().dataclass_schema(schema)
            generated.pop("title", None)
            # A field left out when None (`shapes.to_json`) is never null.
            for name in getattr(schema["cls"], "ABSENT_WHEN_NONE", ()):
                field = generated["properties"][name]
                others = [part for part in field.pop("anyOf") if part != {"type": "null"}]
                generated["properties"][name] = {**others[0], **field}
            return generated

        def typed_dict_schema(self, schema: Any) -> Any:
            generated = super().typed_dict_schema(schema)
            generated.pop("title", None)
            return generated

    inputs = [(name, "serialization", TypeAdapter(shape).core_schema)
              for name, shape in shapes]
    refs, definitions = Generate(ref_template="{model}").generate_definitions(
        inputs)  # type: ignore[arg-type]
    public = {refs[(name, "serialization")]["$ref"]: name for name, _ in shapes}
    names = {generated: public.get(generated, generated.removesuffix("Body"))
             for generated in definitions}

    def rename(node: Any) -> Any:
        if isinstance(node, dict):
            return {key: (f"#/components/schemas/{names[value]}" if key == "$ref"
                          else rename(value)) for key, value in node.items()}
        if isinstance(node, list):
            return [rename(value) for value in node]
        return node

    return {names[generated]: rename(schema) for generated, schema in definitions.items()}


@functools.cache
def component_schemas() -> dict[str, Any]:
    """The schemas of `/app/`'s answers (generated) and request bodies."""
    return {**generated_schemas(RESPONSES), **REQUESTS}
