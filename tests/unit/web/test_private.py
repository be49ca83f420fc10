"""Which answers are private, and how their `Vary` grows (`web.private`)."""

from __future__ import annotations

import pytest

from transcriber.web.private import IDENTITY_VARY, private_path, vary_with


@pytest.mark.parametrize(("path", "private"), [
    ("/app/me", True), ("/app/audiorecords/01j/file", True), ("/v1/models", True),
    ("/app/openapi.json", False), ("/assets/app-1a2b.js", False), ("/", False),
    ("/healthz", False), ("/metrics", False),
])
def test_private_paths(path: str, private: bool) -> None:
    assert private_path(path) is private


def test_vary_adds_each_identity_header_once() -> None:
    assert vary_with("", IDENTITY_VARY) == "Authorization, Cookie, Remote-User"
    assert vary_with("Accept-Encoding, cookie", IDENTITY_VARY) == (
        "Accept-Encoding, cookie, Authorization, Remote-User")
    assert vary_with("*", IDENTITY_VARY) == "*"
