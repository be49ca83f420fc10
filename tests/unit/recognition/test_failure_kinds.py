"""P17: failure kinds decided where the error is understood (ffmpeg, SpeechKit, S3)."""

from __future__ import annotations

import orjson
import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from transcriber.core.errors import PermanentFailure, TransientFailure
from transcriber.ports import OperationFailed
from transcriber.providers.ffmpeg import NOT_AUDIO, UNCONVERTIBLE, classify_ffmpeg_failure
from transcriber.providers.object_store import classify_s3_error
from transcriber.providers.speechkit import (
    classify_http_error,
    classify_operation_error,
    parse_results,
)


@pytest.mark.parametrize("stderr", [
    "Error opening input: Invalid data found when processing input",
    "Stream map '' matches no streams.",
    "[in#0] Failed to find two consecutive MPEG audio frames.",
])
def test_p17_ffmpeg_cannot_decode_is_permanent_not_audio(stderr: str) -> None:
    failure = classify_ffmpeg_failure(183, stderr)
    assert isinstance(failure, PermanentFailure)
    assert failure.reason == NOT_AUDIO


@pytest.mark.parametrize("stderr", [
    # ffmpeg 7's lines for a WAV declaring 2 147 483 647 Hz.
    "[auto_aresample_0 @ 0x7f] [SWR @ 0x7f] Failed to initialize resampler\n"
    "[af#0:0 @ 0x55] Error reinitializing filters!\n"
    "[af#0:0 @ 0x55] Task finished with error code: -12 (Cannot allocate memory)\n"
    "[aost#0:0/libopus @ 0x55] [enc:libopus @ 0x55] Could not open encoder before EOF\n",
    # Older ffmpeg's wording of an encoder that cannot take the input's parameters.
    "Error while opening encoder for output stream #0:0 - maybe incorrect parameters",
])
def test_p17_ffmpeg_cannot_convert_the_parameters_is_permanent(stderr: str) -> None:
    failure = classify_ffmpeg_failure(244, stderr)
    assert isinstance(failure, PermanentFailure)
    assert failure.reason == UNCONVERTIBLE


@pytest.mark.parametrize(("code", "stderr"), [
    (-9, ""), (1, "av_interleaved_write_frame(): No space left on device"), (1, "Killed"),
])
def test_p17_ffmpeg_crash_or_full_disk_is_transient(code: int, stderr: str) -> None:
    assert isinstance(classify_ffmpeg_failure(code, stderr), TransientFailure)


def _status(code: int, message: str = "m") -> bytes:
    return orjson.dumps({"error": {"code": code, "message": message, "details": []}})


@pytest.mark.parametrize(("status", "body"), [
    (429, _status(8)), (503, _status(14)), (500, b""), (504, b"<html>gateway</html>"),
])
def test_p17_speechkit_overload_and_outage_are_transient(status: int, body: bytes) -> None:
    failure = classify_http_error(status, body, retry_after="7", call="operation")
    assert isinstance(failure, TransientFailure)
    assert failure.retry_after == 7.0


@pytest.mark.parametrize(("status", "body"), [(400, _status(3)), (401, _status(16)),
                                              (404, _status(5))])
def test_p17_speechkit_invalid_audio_and_refusals_are_permanent(status: int, body: bytes) -> None:
    failure = classify_http_error(status, body, call="recognizeFileAsync")
    assert isinstance(failure, PermanentFailure)
    assert f"HTTP {status}" in failure.reason


def test_p17_failed_operation_kinds() -> None:
    assert isinstance(classify_operation_error({"code": 14, "message": "x"}), OperationFailed)
    invalid = classify_operation_error({"code": 3, "message": "bad audio at s3://secret"})
    assert isinstance(invalid, PermanentFailure)
    assert "secret" not in invalid.reason


def test_s3_errors_are_sanitized() -> None:
    url = "https://storage.example/bucket/transcriber/01abc/part-000.ogg"
    denied = ClientError({"Error": {"Code": "AccessDenied", "Message": url},
                          "ResponseMetadata": {"HTTPStatusCode": 403}}, "PutObject")
    down = EndpointConnectionError(endpoint_url=url)
    for exc, kind in ((denied, PermanentFailure), (down, TransientFailure)):
        failure = classify_s3_error(exc, operation="upload")
        assert isinstance(failure, kind)
        assert "storage.example" not in failure.reason
        assert "part-000" not in failure.reason


def test_speechkit_results_prefer_the_refinement_and_key_by_channel_and_index() -> None:
    lines = [
        {"result": {"channelTag": "0", "audioCursors": {"finalIndex": "0"},
                    "final": {"alternatives": [{"text": "привет мир", "startTimeMs": "0",
                                                "endTimeMs": "1200"}], "channelTag": "0"}}},
        {"result": {"channelTag": "0", "finalRefinement": {
            "finalIndex": "0", "normalizedText": {"alternatives": [
                {"text": "Привет, мир!", "startTimeMs": "0", "endTimeMs": "1200"}]}}}},
        {"result": {"channelTag": "1", "audioCursors": {"finalIndex": "0"},
                    "final": {"alternatives": [{"text": "second channel",
                                                "startTimeMs": "500", "endTimeMs": "900"}]}}},
        {"result": {"channelTag": "0", "partial": {"alternatives": [{"text": "ignored"}]}}},
        {"result": {"channelTag": "0", "audioCursors": {"finalIndex": "1"},
                    "final": {"alternatives": []}}},
    ]
    payload = b"\n".join(orjson.dumps(line) for line in lines)
    utterances = parse_results(payload)
    assert [(u.channel, u.text, u.start_ms, u.end_ms) for u in utterances] == [
        (0, "Привет, мир!", 0, 1200), (1, "second channel", 500, 900)]


def test_speechkit_garbage_answer_is_permanent() -> None:
    with pytest.raises(PermanentFailure):
        parse_results(b"{not json\n")
