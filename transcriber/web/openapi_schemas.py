"""The components of the OpenAPI document: the schemas of what `/app/` answers and takes."""

from __future__ import annotations

from typing import Any

from transcriber.domain.quality import REASONS, VERDICTS
from transcriber.domain.stages import HaltReason, Stage


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


JSON = "application/json"


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


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


TIME = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$"}
ID = {"type": "string", "pattern": "^[0-7][0-9a-hjkmnp-tv-z]{25}$"}
SPEAKER = "^S[1-9][0-9]?$"
ORIGIN = {"type": ["string", "null"], "enum": ["auto", "human", None]}

# The transcript's quality report (transcriber.domain.quality; docs/recognition.md).
QUALITY: dict[str, Any] = {
    "type": "object",
    "required": ["verdict", "reasons", "speech_seconds", "unclear_seconds", "unclear_spans",
                 "repeats_removed", "low_confidence_share"],
    "additionalProperties": False,
    "description": "How much of the speech the recognizer heard, made when the transcript "
                   "was stored (a correction keeps it: it is the recognizer's report)",
    "properties": {
        "verdict": {"type": "string", "enum": list(VERDICTS)},
        "reasons": {"type": "array", "items": {"type": "string", "enum": list(REASONS)}},
        "speech_seconds": {"type": "number", "minimum": 0},
        "unclear_seconds": {"type": "number", "minimum": 0},
        "unclear_spans": {"type": "array", "items": {
            "type": "object", "required": ["start_ms", "end_ms"],
            "additionalProperties": False,
            "properties": {"start_ms": {"type": "integer", "minimum": 0},
                           "end_ms": {"type": "integer", "minimum": 0}}}},
        "repeats_removed": {"type": "integer", "minimum": 0},
        "low_confidence_share": {"type": ["number", "null"], "minimum": 0, "maximum": 1,
                                 "description": "Share of the words below the "
                                                "confidence threshold; null when the "
                                                "recognizer gave no word confidence"},
    },
}

SCHEMAS: dict[str, Any] = {
    "Error": {
        "type": "object",
        "required": ["error"],
        "additionalProperties": False,
        "properties": {"error": {
            "type": "object", "required": ["code", "message"], "additionalProperties": False,
            "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
        }},
    },
    "User": {
        "type": "object",
        "required": ["id", "login", "name", "email", "created_at"],
        "additionalProperties": False,
        "properties": {"id": ID, "login": {"type": "string", "maxLength": 255},
                       "name": {"type": "string", "maxLength": 255},
                       "email": {"type": "string"}, "created_at": TIME},
    },
    "Halt": {
        "type": "object",
        "required": ["at", "reason", "message"],
        "additionalProperties": False,
        "properties": {
            "at": TIME,
            "reason": {"type": "string", "enum": [r.value for r in HaltReason]},
            "message": {"type": ["string", "null"]},
        },
    },
    "Progress": {
        "type": "object",
        "required": ["stage", "done", "total", "fraction", "eta_seconds"],
        "additionalProperties": False,
        "description": "How far a record on its way to a transcript is: waiting in "
                       "the queue, normalized or recognized; parts of the recognition "
                       "saved, the whole way as a fraction (a running part's share "
                       "estimated from the time since it started), and the seconds left "
                       "until the recognition is done at the speed this host measured "
                       "(before any measurement, the recognizer's warm-up figure).",
        "properties": {
            "stage": {"type": "string", "enum": ["queue", "normalize", "recognize"]},
            "done": {"type": "integer", "minimum": 0},
            "total": {"type": "integer", "minimum": 1},
            "fraction": {"type": "number", "minimum": 0, "maximum": 1},
            "eta_seconds": {"type": ["integer", "null"], "minimum": 0},
        },
    },
    "Record": {
        "type": "object",
        "required": ["id", "title", "original_filename", "source", "stage", "halt",
                     "duration_ms", "size_bytes", "created_at", "updated_at", "progress",
                     "described"],
        "properties": {
            "id": ID,
            "title": {"type": "string"},
            "original_filename": {"type": "string", "maxLength": 255},
            "source": {"type": "string", "enum": ["http", "telegram"]},
            "stage": {"type": "string", "enum": [s.value for s in Stage]},
            "halt": nullable(ref("Halt")),
            "progress": nullable(ref("Progress")),
            "duration_ms": {"type": "integer", "minimum": 0},
            "size_bytes": {"type": "integer", "minimum": 0},
            "created_at": TIME,
            "updated_at": TIME,
            "brief": {"type": "string", "maxLength": 2000},
            "topics": {"type": "array", "maxItems": 5,
                       "items": {"type": "string", "minLength": 1, "maxLength": 64}},
            "described": ref("Described"),
            "quality_verdict": {"type": ["string", "null"],
                                "enum": [*VERDICTS, None],
                                "description": "The transcript's quality verdict (the "
                                               "list's mark); null: no report"},
        },
    },
    "Quality": QUALITY,
    "Word": {
        "type": "object",
        "required": ["start_ms", "end_ms", "text", "probability"],
        "additionalProperties": False,
        "properties": {"start_ms": {"type": "integer"}, "end_ms": {"type": "integer"},
                       "text": {"type": "string"},
                       "probability": {"type": ["number", "null"], "minimum": 0,
                                       "maximum": 1,
                                       "description": "The recognizer's confidence; "
                                                      "null when it gave none"}},
    },
    "Described": {
        "type": "object",
        "required": ["title", "brief", "topics", "by", "state"],
        "additionalProperties": False,
        "description": "Who wrote the title, brief and topics: `auto` (the describer), "
                       "`human` (a person set or cleared it; the describer never writes it "
                       "again), null (nobody yet)",
        "properties": {
            "title": ORIGIN, "brief": ORIGIN, "topics": ORIGIN,
            "by": {"type": ["string", "null"],
                   "description": "The describer of the automatic fields: `extractive` or "
                                  "`openai:<model>`; null when none was written"},
            "state": {"type": ["string", "null"], "enum": ["pending", "done", "failed", None],
                      "description": "The description's job: written after the record is "
                                     "`done` (and again after a re-transcription), never "
                                     "holding the record back; null when none was asked for"},
        },
    },
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
    "Topic": {
        "type": "object",
        "required": ["name", "records"],
        "additionalProperties": False,
        "properties": {"name": {"type": "string"}, "records": {"type": "integer", "minimum": 0}},
    },
    "TopicList": {
        "type": "object",
        "required": ["items", "next_cursor"],
        "additionalProperties": False,
        "properties": {"items": {"type": "array", "items": ref("Topic")},
                       "next_cursor": {"type": ["string", "null"]}},
    },
    "RecordPage": {
        "type": "object",
        "required": ["items", "next_cursor"],
        "additionalProperties": False,
        "properties": {"items": {"type": "array", "description": "Search results (with `q`) "
                                 "are records with their `matches`",
                                 "items": {"anyOf": [ref("SearchResult"), ref("Record")]}},
                       "next_cursor": {"type": ["string", "null"]}},
    },
    "SearchResult": {
        "allOf": [ref("Record"), {
            "type": "object", "required": ["matches"],
            "properties": {"matches": {
                "type": "array", "maxItems": 3, "items": ref("Match"),
                "description": "Up to 3 utterances holding the query's words (those holding "
                               "the most terms), in time order; empty when only the title, "
                               "brief, file name or speaker names matched"},
                "matches_partial": {
                    "type": "boolean", "const": True,
                    "description": "Present when the matching's CPU budget ran out before "
                                   "this record's transcript was read whole"}},
        }],
    },
    "Match": {
        "type": "object",
        "required": ["utterance_index", "start_ms", "end_ms", "speaker", "snippet", "marks"],
        "additionalProperties": False,
        "properties": {
            "utterance_index": {"type": "integer", "minimum": 0,
                                "description": "The card's `utterances[].index`"},
            "start_ms": {"type": "integer"}, "end_ms": {"type": "integer"},
            "speaker": {"type": ["string", "null"], "pattern": SPEAKER},
            "snippet": {"type": "string", "maxLength": 240,
                        "description": "The utterance's text; a long one cut around its "
                                       "first mark, with … at a cut end"},
            "marks": {"type": "array", "description": "The matched words of the snippet: "
                      "[start, end) in Unicode code points, in order",
                      "items": {"type": "array", "minItems": 2, "maxItems": 2,
                                "items": {"type": "integer", "minimum": 0}}},
        },
    },
    "MatchList": {
        "type": "object",
        "required": ["matches", "partial"],
        "additionalProperties": False,
        "properties": {"matches": {"type": "array", "items": ref("Match")},
                       "partial": {"type": "boolean",
                                   "description": "The matching's CPU budget ran out "
                                                  "before the transcript was read whole"}},
    },
    "FileCopy": {
        "type": "object",
        "required": ["size_bytes", "format", "duration_ms"],
        "additionalProperties": False,
        "properties": {"size_bytes": {"type": "integer", "minimum": 0},
                       "format": {"type": "string"},
                       "duration_ms": {"type": ["integer", "null"]}},
    },
    "Utterance": {
        "type": "object",
        "required": ["index", "start_ms", "end_ms", "channel", "speaker", "text"],
        "additionalProperties": False,
        "properties": {"index": {"type": "integer", "minimum": 0},
                       "start_ms": {"type": "integer"}, "end_ms": {"type": "integer"},
                       "channel": {"type": "integer"},
                       "speaker": {"type": ["string", "null"], "pattern": SPEAKER,
                                   "description": "S1, S2, … when speakers were told "
                                                  "apart, else null"},
                       "text": {"type": "string"},
                       "words": {"type": "array", "items": ref("Word"),
                                 "description": "The recognizer's words with their "
                                                "confidence; empty when it gave none or "
                                                "the line was corrected"}},
    },
    "Speaker": {
        "type": "object",
        "required": ["name", "talk_ms", "suggested"],
        "additionalProperties": False,
        "properties": {"name": {"type": "string", "maxLength": 64,
                                "description": "The owner's name for the speaker; empty "
                                               "when none"},
                       "talk_ms": {"type": "integer", "minimum": 0},
                       "suggested": nullable(ref("Suggestion"))},
    },
    "Suggestion": {
        "type": "object",
        "required": ["name", "profile_id", "similarity"],
        "additionalProperties": False,
        "description": "An unnamed speaker sounds like one of the owner's known voices: "
                       "confirm it (it becomes the name) or reject it",
        "properties": {"name": {"type": "string", "maxLength": 64},
                       "profile_id": ID,
                       "similarity": {"type": "number", "minimum": -1, "maximum": 1,
                                      "description": "Cosine similarity of the voices"}},
    },
    "Voice": {
        "type": "object",
        "required": ["id", "name", "records", "talk_ms", "created_at", "updated_at"],
        "additionalProperties": False,
        "description": "One of the owner's known voices: its name and counts (never its "
                       "embeddings)",
        "properties": {"id": ID, "name": {"type": "string", "maxLength": 64},
                       "records": {"type": "integer", "minimum": 0,
                                   "description": "Records it was learned from"},
                       "talk_ms": {"type": "integer", "minimum": 0,
                                   "description": "Speech it was learned from"},
                       "created_at": TIME, "updated_at": TIME},
    },
    "VoiceList": {
        "type": "object", "required": ["items"], "additionalProperties": False,
        "properties": {"items": {"type": "array", "items": ref("Voice")}},
    },
    "TimelineEvent": {
        "type": "object",
        "required": ["at", "origin", "step", "outcome", "duration_ms"],
        "additionalProperties": False,
        "properties": {
            "at": TIME,
            "origin": {"type": "string", "enum": ["pipeline", "human"]},
            "step": {"type": "string"},
            "outcome": {"type": "string", "enum": ["done", "failed", "halted", "resumed"]},
            "duration_ms": {"type": ["integer", "null"]},
        },
    },
    "Card": {
        "allOf": [ref("Record"), {
            "type": "object",
            "required": ["files", "transcript", "utterances", "speakers", "timeline",
                         "poll_after_ms", "revision", "language"],
            "properties": {
                "revision": {"type": "integer", "minimum": 0,
                             "description": "The transcript's revision: send it back with "
                                            "a correction"},
                "language": {
                    "type": "object", "required": ["requested", "detected"],
                    "additionalProperties": False,
                    "properties": {"requested": {"type": "string"},
                                   "detected": {"type": ["string", "null"]}},
                },
                "files": {
                    "type": "object", "required": ["original", "normalized"],
                    "additionalProperties": False,
                    "properties": {"original": nullable(ref("FileCopy")),
                                   "normalized": nullable(ref("FileCopy"))},
                },
                "transcript": {"type": ["string", "null"]},
                "quality": nullable(ref("Quality")),
                "utterances": {"type": "array", "items": ref("Utterance")},
                "speakers": {"type": "object", "additionalProperties": ref("Speaker"),
                             "propertyNames": {"pattern": SPEAKER},
                             "description": "Each speaker label of the utterances"},
                "timeline": {"type": "array", "items": ref("TimelineEvent")},
                "poll_after_ms": {
                    "type": ["integer", "null"], "minimum": 1,
                    "description": "Poll the card no sooner than this; null when the "
                                   "record is done or halted and its description is not "
                                   "pending (nothing changes by itself).",
                },
            },
        }],
    },
}
