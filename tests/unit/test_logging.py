"""Log rendering: console on a terminal with `auto`, JSON lines otherwise, for
structlog events and for the stdlib records of libraries alike."""

from __future__ import annotations

import io
import logging

import orjson
import pytest
import structlog

from transcriber.core.observability import configure_logging, renders_json


@pytest.mark.parametrize(("fmt", "terminal", "expected"), [
    ("auto", True, False), ("auto", False, True), ("json", True, True),
    ("console", False, False),
])
def test_the_format_follows_the_setting_and_the_terminal(
    fmt: str, terminal: bool, expected: bool,
) -> None:
    assert renders_json(fmt, terminal=terminal) is expected


def test_library_records_are_json_lines_too(monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    root = logging.getLogger()
    before = (root.level, list(root.handlers))
    structlog_before = structlog.get_config()
    configure_logging("INFO", "json")
    try:
        structlog.get_logger("t").info("own_event", record_id="r1")
        logging.getLogger("asyncio").warning("a library speaks")
        lines = [orjson.loads(line) for line in err.getvalue().splitlines()]
        assert [line["event"] for line in lines] == ["own_event", "a library speaks"]
        assert lines[1]["level"] == "warning"
        assert lines[1]["logger"] == "asyncio"
        configure_logging("WARNING", "console")  # the handler is replaced, never stacked
        ours = [h for h in root.handlers if type(h).__name__ == "_ServiceHandler"]
        assert len(ours) == 1
    finally:
        # Later tests must not write into this test's stream.
        root.setLevel(before[0])
        root.handlers[:] = before[1]
        structlog.configure(**structlog_before)
