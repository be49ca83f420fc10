"""The command-line client's pure rules for its server's answers (cli/answers.py,
cli/shown.py, cli/outputs.py) and `transcriber status`'s reading of a metrics page."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from yarl import URL

from transcriber.cli.answers import (
    MIB,
    TIMEOUT_SECONDS,
    TRANSCRIPT_MAX_BYTES,
    BadServerAnswer,
    Card,
    clear_text_host,
    is_loopback,
    poll_seconds,
    record_id,
    redirect_target,
    retry_seconds,
)
from transcriber.cli.outputs import inside, output_names
from transcriber.cli.parser import build_parser
from transcriber.cli.shown import shown, shown_lines
from transcriber.cli.status import mailbox_value


@pytest.fixture(autouse=True)
def english(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")


def test_shown_escapes_every_terminal_command_and_cuts_long_lines() -> None:
    assert shown("\x1b]0;title\x07") == "\\x1b]0;title\\x07"
    assert shown("a\x9b2Jb\u202ec\u2028d\x7f\n\t") == "a\\x9b2Jb\\u202ec\\u2028d\\x7f\\x0a\\x09"
    assert shown("Привет, мир ✓ \u200d") == "Привет, мир ✓ \u200d"  # text stays text
    assert shown("x" * 1000) == "x" * 300 + "…"
    assert shown_lines("one\x1b[2J\n\ttwo\r\n") == "one\\x1b[2J\n\ttwo\\x0d\n"
    assert shown_lines("plain\nlines\n") == "plain\nlines\n"


@pytest.mark.parametrize(("value", "seconds"), [
    (None, None), (4000, 4.0), (-1000, 0.5), (0, 0.5), (1, 0.5), (10**15, 30.0),
    (1e308, 30.0), (float("inf"), 30.0), (float("-inf"), 0.5), (float("nan"), 4.0),
    (2500.5, 2.5005),
])
def test_the_poll_interval_is_clamped_to_half_a_second_to_thirty(
        value: object, seconds: float | None) -> None:
    assert poll_seconds(value) == seconds


@pytest.mark.parametrize("value", ["4000", True, [1], {"ms": 1}])
def test_a_poll_interval_that_is_not_a_number_is_a_bad_answer(value: object) -> None:
    with pytest.raises(BadServerAnswer, match="poll_after_ms"):
        poll_seconds(value)


def test_retry_after_is_bounded() -> None:
    assert retry_seconds("5", 0) == 5.0
    assert retry_seconds("-100", 0) == 0.5
    assert retry_seconds("1e12", 0) == 60.0
    assert retry_seconds("nan", 2) == 4.0
    assert retry_seconds("Wed, 21 Oct 2015 07:28:00 GMT", 3) == 8.0
    assert retry_seconds(None, 10) == 60.0


def _card(**fields: object) -> bytes:
    base: dict[str, object] = {"stage": "recognized", "halt": None, "poll_after_ms": 4000,
                               "progress": None}
    return orjson.dumps({**base, **fields})


def test_a_card_is_read_into_a_typed_value() -> None:
    card = Card.from_body(_card(progress={"stage": "recognize", "done": 3, "total": 4,
                                          "fraction": 7.5, "eta_seconds": None}))
    assert card.poll_seconds == 4.0
    assert card.progress is not None
    assert card.progress.fraction == 1.0  # clamped
    halted = Card.from_body(_card(halt={"reason": "step_failed", "message": None},
                                  poll_after_ms=None))
    assert (halted.halt_reason, halted.halt_message, halted.poll_seconds) == (
        "step_failed", "", None)


@pytest.mark.parametrize("body", [
    b"not json", b"[1]", _card(stage=None), _card(stage=3), _card(halt="x"),
    _card(halt={"message": "m"}), _card(halt={"reason": "r", "message": 5}),
    _card(progress=[]), _card(progress={"stage": "s", "done": 1, "total": 2}),
    _card(progress={"stage": "s", "done": "1", "total": 2, "fraction": 0.5}),
    _card(poll_after_ms="soon"),
])
def test_a_malformed_card_is_a_bad_answer_not_a_traceback(body: bytes) -> None:
    with pytest.raises(BadServerAnswer, match="the record's card is not what the API describes"):
        Card.from_body(body)


@pytest.mark.parametrize("body", [
    b'{"id": "x/../../etc"}', b'{"id": "../01j0000000000000000000000a"}', b'{"id": 5}',
    b'{"id": "01J0000000000000000000000A/.."}', b"[]", b"<html>", b'{"id": "\\u001b[2J"}',
])
def test_a_record_id_must_be_an_id(body: bytes) -> None:
    with pytest.raises(BadServerAnswer, match="holds no record id"):
        record_id(body)


def test_a_record_id_is_taken_in_lower_case() -> None:
    assert record_id(b'{"id": "01J0000000000000000000000A"}') == "01j0000000000000000000000a"


def test_redirects_stay_within_the_origin() -> None:
    server = URL("https://t.example/prefix")
    here = URL("https://t.example/prefix/app/audiorecords")
    assert redirect_target(here, "/v2/x", server) == URL("https://t.example/v2/x")
    assert redirect_target(here, "other", server) == URL("https://t.example/prefix/app/other")
    assert redirect_target(here, "https://T.EXAMPLE./y", server).path == "/y"
    for elsewhere in ("https://evil.example/x", "http://t.example/x",
                      "https://t.example:8443/x", "//evil.example/x",
                      "https://t.example@evil.example/x"):
        with pytest.raises(BadServerAnswer, match="another origin"):
            redirect_target(here, elsewhere, server)
    with pytest.raises(BadServerAnswer, match="without a valid Location"):
        redirect_target(here, None, server)


def test_a_token_in_clear_text_only_to_this_machine() -> None:
    assert clear_text_host("http://transcriber.lan:8080", "tx_1") == "transcriber.lan"
    assert clear_text_host("http://192.168.1.5", "tx_1") == "192.168.1.5"
    assert clear_text_host("http://192.168.1.5", None) is None
    assert clear_text_host("https://transcriber.lan", "tx_1") is None
    for local in ("http://127.0.0.1:8080", "http://127.9.9.9", "http://[::1]:80",
                  "http://localhost:8080", "http://LOCALHOST.", "http://a.localhost"):
        assert clear_text_host(local, "tx_1") is None, local
    assert not is_loopback("localhost.evil.example")


def test_output_names_come_from_the_local_files_in_order(tmp_path: Path) -> None:
    paths = [Path("a/talk.mp3"), Path("b/talk.wav"), Path("c/TALK.ogg"), Path("talk-2.m4a"),
             Path("..mp3")]
    assert output_names(paths, tmp_path, "srt", force=False) == {
        0: tmp_path / "talk.srt", 1: tmp_path / "talk-2.srt", 2: tmp_path / "TALK-3.srt",
        3: tmp_path / "talk-2-2.srt", 4: tmp_path / "..srt"}
    (tmp_path / "talk-2.srt").write_text("kept")
    refused = output_names(paths, tmp_path, "srt", force=False)
    assert refused == f"{tmp_path / 'talk-2.srt'} exists: choose another --output, or " \
                      f"--force to overwrite"
    assert isinstance(output_names(paths, tmp_path, "srt", force=True), dict)
    for bad in ("..", ".", "", "a/b"):
        with pytest.raises(ValueError, match="one plain file name"):
            inside(tmp_path, bad)


def test_the_parser_defaults_are_the_client_bounds() -> None:
    args = build_parser().parse_args(["upload", "f.mp3"])
    assert args.timeout == TIMEOUT_SECONDS
    assert args.max_transcript_mib * MIB == TRANSCRIPT_MAX_BYTES
    assert (args.force, args.insecure) == (False, False)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["upload", "f.mp3", "--timeout", "0"])


def test_status_reads_only_a_finite_mailbox_depth() -> None:
    assert mailbox_value("# HELP x\ntranscriber_writer_mailbox_depth 3.0\n") == 3.0
    for bad in ("NaN", "+Inf", "-1", "x", ""):
        assert mailbox_value(f"transcriber_writer_mailbox_depth {bad}\n") is None, bad
    assert mailbox_value("other 1\n") is None
