"""The watched folder's pure rules (`domain.watch`): which names are taken, when a file
is still enough to be taken whole, the free name in `done/`."""

from __future__ import annotations

import pytest

from transcriber.domain.watch import Seen, Watched, free_name, is_candidate, look


@pytest.mark.parametrize("name", ["memo.m4a", "Meeting 2026-12-07.MP3", "voice.opus",
                                  "call.ogg", "talk.wav", "x.webm"])
def test_recordings_are_candidates(name: str) -> None:
    assert is_candidate(name)


@pytest.mark.parametrize("name", [
    ".syncthing.memo.m4a.tmp",  # Syncthing's temporary name
    "~syncthing~memo.m4a.tmp",  # Syncthing on Windows
    "memo.m4a.part",  # Nextcloud, Firefox
    ".memo.m4a.~3f2a",  # Nextcloud's desktop client
    "memo.m4a.crdownload", "memo.m4a.filepart", "memo.m4a.!sync", "memo.m4a~",
    ".hidden.mp3", "notes.txt", "photo.jpg", "mp3", ".mp3",
])
def test_partial_hidden_and_other_files_are_not(name: str) -> None:
    assert not is_candidate(name)


def _seen(size: int, mtime: int = 1) -> Seen:
    return Seen(size=size, mtime_ns=mtime)


def test_a_file_is_ready_only_after_staying_still_for_the_stable_time() -> None:
    first = look({}, {"a.mp3": _seen(10)}, now=0.0, stable_seconds=5)
    assert first.ready == ()
    early = look(first.watching, {"a.mp3": _seen(10)}, now=4.9, stable_seconds=5)
    assert early.ready == ()
    ready = look(early.watching, {"a.mp3": _seen(10)}, now=5.0, stable_seconds=5)
    assert ready.ready == ("a.mp3",)


def test_a_growing_file_starts_its_wait_again() -> None:
    state = look({}, {"a.mp3": _seen(10)}, now=0.0, stable_seconds=5).watching
    grown = look(state, {"a.mp3": _seen(20)}, now=4.0, stable_seconds=5)
    assert grown.ready == ()
    assert grown.watching["a.mp3"] == Watched(seen=_seen(20), since=4.0)
    assert look(grown.watching, {"a.mp3": _seen(20)}, now=8.9, stable_seconds=5).ready == ()
    assert look(grown.watching, {"a.mp3": _seen(20)}, now=9.0,
                stable_seconds=5).ready == ("a.mp3",)


def test_a_rewritten_file_of_the_same_size_starts_again() -> None:
    state = look({}, {"a.mp3": _seen(10, mtime=1)}, now=0.0, stable_seconds=5).watching
    touched = look(state, {"a.mp3": _seen(10, mtime=2)}, now=6.0, stable_seconds=5)
    assert touched.ready == ()


def test_an_empty_file_is_never_ready_and_a_gone_file_is_forgotten() -> None:
    state = look({}, {"a.mp3": _seen(0), "b.mp3": _seen(3)}, now=0.0, stable_seconds=1)
    later = look(state.watching, {"a.mp3": _seen(0)}, now=10.0, stable_seconds=1)
    assert later.ready == ()
    assert set(later.watching) == {"a.mp3"}


def test_free_name_keeps_the_first_of_two_same_names() -> None:
    assert free_name("memo.m4a", []) == "memo.m4a"
    assert free_name("memo.m4a", ["memo.m4a"]) == "memo (2).m4a"
    assert free_name("memo.m4a", ["memo.m4a", "memo (2).m4a"]) == "memo (3).m4a"
    assert free_name("memo", ["memo"]) == "memo (2)"
