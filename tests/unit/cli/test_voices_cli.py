"""`transcriber voices purge [LOGIN]`: the command line's shape."""

from __future__ import annotations

import pytest

from transcriber.cli.parser import build_parser


def test_purge_takes_an_optional_login() -> None:
    everybody = build_parser().parse_args(["voices", "purge"])
    assert (everybody.command, everybody.voices_command, everybody.login) == (
        "voices", "purge", None)
    one = build_parser().parse_args(["voices", "purge", "anna"])
    assert one.login == "anna"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["voices"])  # what to do with them is required
