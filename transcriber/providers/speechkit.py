"""Yandex SpeechKit asynchronous recognition, API v3 over REST.

`submit` starts `recognizeFileAsync` with the uri of the object in Object
Storage; `fetch` polls `operations/{id}` (within a process-wide budget of
status checks) and, once done, downloads `getRecognition` (one JSON object
per line, int64 values as strings). Auth is `Api-Key` (async recognition
needs a service account). Failure kinds are decided here (P17): 429,
`RESOURCE_EXHAUSTED`, 5xx, `UNAVAILABLE`, timeouts and network errors are
transient; an `INVALID_ARGUMENT` about the audio and other 4xx are
permanent. Reasons carry status codes only, never URLs, keys or text.

Speakers (mono audio): when they are wanted the request asks for SpeechKit's
speaker labeling (`speakerLabeling.speakerLabeling = SPEAKER_LABELING_ENABLED`,
offered in `FULL_DATA` mode for mono audio, at most two speakers); the answer
then tells the speakers apart by `channelTag` ("0", "1"). A refusal of the
labeling (a model, language or audio it is not offered for) is answered by
asking once more without it: the record is recognized without speakers.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final

import aiohttp
import orjson
import structlog

from transcriber.core.errors import (
    ConfigError,
    PermanentFailure,
    StepFailure,
    TransientFailure,
)
from transcriber.core.observability import PROVIDER_CALL_SECONDS
from transcriber.ports import (
    Answer,
    AudioPart,
    Capabilities,
    OperationFailed,
    PollLater,
    Submitted,
    Utterance,
)
from transcriber.providers.quota import CallBudget
from transcriber.providers.recognizers import (
    SPEECHKIT,
    speechkit_capabilities,
    speechkit_language_codes,
)
from transcriber.settings import SpeechkitSettings

log = structlog.get_logger(__name__)

# google.rpc.Code numbers and names.
GRPC_CODES = {
    0: "OK", 1: "CANCELLED", 2: "UNKNOWN", 3: "INVALID_ARGUMENT", 4: "DEADLINE_EXCEEDED",
    5: "NOT_FOUND", 6: "ALREADY_EXISTS", 7: "PERMISSION_DENIED", 8: "RESOURCE_EXHAUSTED",
    9: "FAILED_PRECONDITION", 10: "ABORTED", 11: "OUT_OF_RANGE", 12: "UNIMPLEMENTED",
    13: "INTERNAL", 14: "UNAVAILABLE", 15: "DATA_LOSS", 16: "UNAUTHENTICATED",
}
TRANSIENT_CODES = frozenset({
    "CANCELLED", "UNKNOWN", "DEADLINE_EXCEEDED", "RESOURCE_EXHAUSTED", "ABORTED", "INTERNAL",
    "UNAVAILABLE",
})
_STATUS_CHECK_WINDOW = 3600.0
SPEAKER_LABELING: Final = {"speakerLabeling": "SPEAKER_LABELING_ENABLED"}


class LabelingRefused(PermanentFailure):
    """SpeechKit refused the speaker labeling the request asked for (not the audio)."""


def code_name(code: Any) -> str:
    if isinstance(code, str) and not code.isdigit():
        return code.upper()
    try:
        return GRPC_CODES.get(int(code), "UNKNOWN")
    except (TypeError, ValueError):
        return "UNKNOWN"


def classify_http_error(status: int, body: bytes, *, retry_after: str | None = None,
                        call: str) -> StepFailure:
    """Pure: the failure kind of a non-2xx answer (google.rpc.Status body if any)."""
    name = message = ""
    try:
        data = orjson.loads(body) if body else None
        if isinstance(data, dict):
            error = data.get("error", data)
            if isinstance(error, dict):
                name = code_name(error.get("code", error.get("status", "")))
                message = str(error.get("message") or data.get("message") or "")
    except orjson.JSONDecodeError:
        pass
    label = f"SpeechKit {call} answered HTTP {status}" + (f" {name}" if name else "")
    if status == 400 and "speaker" in message.lower():
        # Its message is SpeechKit's prose; only the fact of the refusal is kept.
        return LabelingRefused(f"{label}: speaker labeling refused")
    if status == 429 or name == "RESOURCE_EXHAUSTED":
        return TransientFailure(label, retry_after=_seconds(retry_after))
    if status >= 500 or name in TRANSIENT_CODES:
        return TransientFailure(label, retry_after=_seconds(retry_after))
    if status in (401, 403):
        return PermanentFailure(f"{label}: check speechkit.api_key and its roles")
    return PermanentFailure(label)


def classify_operation_error(error: Mapping[str, Any]) -> StepFailure:
    """Pure: the kind of a finished operation's `error` (google.rpc.Status)."""
    name = code_name(error.get("code"))
    if name in TRANSIENT_CODES:
        return OperationFailed(f"SpeechKit operation failed: {name}")
    if name == "INVALID_ARGUMENT":
        return PermanentFailure("SpeechKit rejected the audio (INVALID_ARGUMENT)")
    return PermanentFailure(f"SpeechKit operation failed: {name}")


def _seconds(value: str | None) -> float | None:
    try:
        return float(value) if value else None
    except ValueError:
        return None


def _ms(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def parse_results(payload: bytes) -> list[Utterance]:
    """`getRecognition` lines → utterances, keyed by channel and final index.

    `final` gives the raw text; `finalRefinement.normalizedText` (literature
    normalization) replaces it when present.
    """
    by_key: dict[tuple[int, int], tuple[Utterance, bool]] = {}
    for line in payload.splitlines():
        if not line.strip():
            continue
        try:
            message = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise PermanentFailure("SpeechKit answer is not JSON lines") from None
        if isinstance(message, dict) and isinstance(message.get("result"), dict):
            message = message["result"]
        if not isinstance(message, dict):
            continue
        channel = _ms(message.get("channelTag"))
        if isinstance(message.get("finalRefinement"), dict):
            refinement = message["finalRefinement"]
            update = refinement.get("normalizedText") or {}
            index = _ms(refinement.get("finalIndex"))
            refined = True
        elif isinstance(message.get("final"), dict):
            update = message["final"]
            index = _ms((message.get("audioCursors") or {}).get("finalIndex"))
            refined = False
        else:
            continue
        alternatives = update.get("alternatives") or []
        if not alternatives:
            continue
        best = alternatives[0]
        utterance = Utterance(start_ms=_ms(best.get("startTimeMs")),
                              end_ms=_ms(best.get("endTimeMs")), channel=channel,
                              text=str(best.get("text", "")).strip())
        previous = by_key.get((channel, index))
        if previous is None or refined or not previous[1]:
            by_key[(channel, index)] = (utterance, refined)
    utterances = [u for u, _ in by_key.values() if u.text]
    utterances.sort(key=lambda u: (u.start_ms, u.channel))
    return with_tag_speakers(utterances)


def read_results(payload: bytes) -> Answer:
    """A saved `getRecognition` answer as the pipeline reads it: its utterances (it
    says nothing of its speech regions, unclear speech, repeats or language)."""
    return Answer(utterances=tuple(parse_results(payload)))


def with_tag_speakers(utterances: list[Utterance]) -> list[Utterance]:
    """Pure: "S1", "S2", … from the answer's `channelTag` when it carries two or more.

    With speaker labeling (mono audio) each tag is one speaker; with two-channel
    audio each tag is one channel, which is one speaker too: tag 0 is S1 either
    way. One tag only (labeling off, or one voice heard) tells no speakers apart:
    none, as for a record whose speakers were never told apart.
    """
    tags = {u.channel for u in utterances}
    if len(tags) < 2:
        return utterances
    return [replace(u, speaker=f"S{u.channel + 1}") for u in utterances]


class SpeechkitRecognizer:
    """The `Recognizer` port on SpeechKit v3 async recognition."""

    provider = SPEECHKIT
    payload_ext = ".jsonl"

    def __init__(self, settings: SpeechkitSettings, *, budget: CallBudget,
                 session: aiohttp.ClientSession | None = None) -> None:
        if settings.api_key is None:
            raise ConfigError("speechkit.api_key",
                              "must be set when recognizer.provider is speechkit")
        self._settings = settings
        self._budget = budget
        self._api_key = settings.api_key.value
        self._session = session
        self._own_session = session is None

    @property
    def capabilities(self) -> Capabilities:
        return speechkit_capabilities(self._settings)

    @property
    def model(self) -> str:
        return self._settings.model

    def time_limit_seconds(self, duration_ms: int | None) -> float | None:
        return None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            timeout = aiohttp.ClientTimeout(
                total=None, sock_connect=self._settings.connect_timeout_seconds,
                connect=self._settings.connect_timeout_seconds,
                sock_read=self._settings.read_timeout_seconds,
            )
            self._session = aiohttp.ClientSession(timeout=timeout)
        return self._session

    def request_body(self, uri: str, language: str | None = None, *,
                     speakers: bool = False) -> dict[str, Any]:
        """The `recognizeFileAsync` body. A stereo copy needs nothing more: for
        container audio (OGG Opus) the service reads the channel count from the
        file (v3 has `audioChannelCount` for raw LPCM only) and recognizes each
        channel on its own, answering per `channelTag`. `speakers` asks for
        speaker labeling (mono audio only)."""
        settings = self._settings
        body: dict[str, Any] = {
            "uri": uri,
            "recognitionModel": {
                "model": settings.model,
                "audioFormat": {"containerAudio": {"containerAudioType": "OGG_OPUS"}},
                "textNormalization": {
                    "textNormalization": "TEXT_NORMALIZATION_ENABLED",
                    "profanityFilter": False,
                    "literatureText": True,
                },
                "languageRestriction": {
                    "restrictionType": "WHITELIST",
                    "languageCode": speechkit_language_codes(language, settings.language),
                },
                "audioProcessingType": "FULL_DATA",
            },
        }
        if speakers:
            body["speakerLabeling"] = dict(SPEAKER_LABELING)
        return body

    async def submit(self, part: AudioPart) -> Submitted:
        if part.uri is None:
            raise PermanentFailure("SpeechKit needs the object's uri")
        url = f"{self._settings.stt_url.rstrip('/')}/stt/v3/recognizeFileAsync"
        # `words` asks for what tells speakers apart: here SpeechKit's own labeling.
        try:
            body = await self._request(
                "POST", url, call="recognizeFileAsync",
                json_body=self.request_body(part.uri, part.language, speakers=part.words))
        except LabelingRefused:
            if not part.words:
                raise
            log.warning("speechkit_labeling_refused", model=self._settings.model)
            body = await self._request("POST", url, call="recognizeFileAsync",
                                       json_body=self.request_body(part.uri, part.language))
        operation = _json_object(body, call="recognizeFileAsync")
        operation_id = operation.get("id")
        if not isinstance(operation_id, str) or not operation_id:
            raise TransientFailure("SpeechKit recognizeFileAsync answered without an id")
        return Submitted(external_id=operation_id)

    async def fetch(self, external_id: str) -> bytes | None:
        wait = self._budget.try_acquire()
        if wait > 0:
            raise PollLater(wait)
        url = f"{self._settings.operation_url.rstrip('/')}/operations/{external_id}"
        operation = _json_object(await self._request("GET", url, call="operation"),
                                 call="operation")
        if not operation.get("done"):
            return None
        error = operation.get("error")
        if isinstance(error, dict) and error:
            raise classify_operation_error(error)
        results_url = f"{self._settings.stt_url.rstrip('/')}/stt/v3/getRecognition"
        return await self._request("GET", results_url, call="getRecognition",
                                   params={"operationId": external_id})

    def parse(self, payload: bytes) -> Answer:
        return read_results(payload)

    async def close(self) -> None:
        if self._own_session and self._session is not None:
            await self._session.close()
            self._session = None

    async def _request(self, method: str, url: str, *, call: str,
                       json_body: Mapping[str, Any] | None = None,
                       params: Mapping[str, str] | None = None) -> bytes:
        headers = {"Authorization": f"Api-Key {self._api_key}"}
        if json_body is not None:
            headers["Content-Type"] = "application/json"
        started = time.perf_counter()
        try:
            async with self._client().request(
                method, url, headers=headers, params=params,
                data=orjson.dumps(json_body) if json_body is not None else None,
            ) as response:
                body = await response.read()
                if response.status >= 300:
                    failure = classify_http_error(
                        response.status, body, retry_after=response.headers.get("Retry-After"),
                        call=call)
                    log.warning("speechkit_call_failed", call=call, status=response.status,
                                kind=type(failure).__name__)
                    raise failure
                return body
        except (TimeoutError, aiohttp.ClientError) as exc:
            # aiohttp's messages carry the URL; keep only the class name.
            log.warning("speechkit_call_failed", call=call, error=type(exc).__name__)
            raise TransientFailure(f"SpeechKit {call} failed ({type(exc).__name__})") from None
        finally:
            PROVIDER_CALL_SECONDS.labels("speechkit", call).observe(time.perf_counter() - started)


def _json_object(body: bytes, *, call: str) -> dict[str, Any]:
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise TransientFailure(f"SpeechKit {call} answered with something not JSON") from None
    if not isinstance(data, dict):
        raise TransientFailure(f"SpeechKit {call} answered with something not an object")
    return data
