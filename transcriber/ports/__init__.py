"""Ports: what the pipeline needs from the outside world, and the values they speak in.

Every Protocol a step is given and every value type it passes through one:
`recognition` (the recognizer and the part cutter), `speakers` (the speaker
separator), `media` (transcoder, the decoder of a stretch of samples for text
while recording, object store), `files` (the record-file
store), `notify` (the notifier),
`webhooks` (the webhook transport), `describe` (the describer of a record's
title, brief and topics), `ask` (the language model that answers a
question), `duties` (the locks of the work one process runs at a time).
The values they speak in (utterances, spans, words, turns) are the domain's
(`domain/transcripts.py`), named here too. Imports: `core` and `domain`
only.
Adapters live in `transcriber.providers` and `transcriber.bot`; in-package
fakes that record their calls live in `transcriber.testing`. Import the names
from here: the modules are how the package is cut, not part of its contract.
"""

from __future__ import annotations

from transcriber.domain.transcripts import Segment, Span, Turn, Utterance, Word
from transcriber.ports.ask import Answerer, ChatMessage, StreamsAnswers
from transcriber.ports.describe import ArchiveCounts, ArchiveTerms, Describer, Material
from transcriber.ports.duties import Duty, DutyLock, DutyLocks
from transcriber.ports.files import FilesKind, RecordFiles
from transcriber.ports.media import (
    AudioProbe,
    DecodesSamples,
    ObjectStore,
    ProgressCallback,
    Transcoder,
)
from transcriber.ports.notify import Notifier, ReplyAddress, Undelivered, UndeliveredReason
from transcriber.ports.recognition import (
    Answer,
    AnswerFormat,
    AnswerParser,
    AudioPart,
    Capabilities,
    OperationFailed,
    PartCutter,
    PollLater,
    Recognizer,
    RecognizesSamples,
    Runs,
    SpeakerLabels,
    SpeechSink,
    Submitted,
    Translates,
    Warms,
)
from transcriber.ports.speakers import Separation, SpeakerSeparator, SpeakersUnavailable
from transcriber.ports.webhooks import WebhookAnswer, WebhookTransport, WebhookUnreachable

__all__ = [
    "Answer",
    "AnswerFormat",
    "AnswerParser",
    "Answerer",
    "ArchiveCounts",
    "ArchiveTerms",
    "AudioPart",
    "AudioProbe",
    "Capabilities",
    "ChatMessage",
    "DecodesSamples",
    "Describer",
    "Duty",
    "DutyLock",
    "DutyLocks",
    "FilesKind",
    "Material",
    "Notifier",
    "ObjectStore",
    "OperationFailed",
    "PartCutter",
    "PollLater",
    "ProgressCallback",
    "Recognizer",
    "RecognizesSamples",
    "RecordFiles",
    "ReplyAddress",
    "Runs",
    "Segment",
    "Separation",
    "Span",
    "SpeakerLabels",
    "SpeakerSeparator",
    "SpeakersUnavailable",
    "SpeechSink",
    "StreamsAnswers",
    "Submitted",
    "Transcoder",
    "Translates",
    "Turn",
    "Undelivered",
    "UndeliveredReason",
    "Utterance",
    "Warms",
    "WebhookAnswer",
    "WebhookTransport",
    "WebhookUnreachable",
    "Word",
]
