"""The text-while-recording actor's bounds (`web/live_text.py`), with fakes and the
fake clock: one upload followed per person, a quiet one forgotten, an unreadable one
given up, and uploads taking turns a window at a time."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from transcriber.core.errors import PermanentFailure
from transcriber.core.ids import new_unguessable_id
from transcriber.db.reads.uploads import Upload
from transcriber.domain.live_text import WINDOW_MS
from transcriber.testing.clock import FakeClock
from transcriber.testing.recognizer import FakeVoiceRecognizer
from transcriber.testing.transcoder import FakeTranscoder
from transcriber.web.live_text import FORGET_SECONDS, LiveText
from transcriber.web.partials import Partials

ALICE = "01jabcdefghjkmnpqrstvwxya0"
BOB = "01jabcdefghjkmnpqrstvwxyb0"


class Unreadable(FakeTranscoder):
    async def samples(self, source: Path, *, start_ms: int, length_ms: int) -> bytes:
        self.decoded.append((source, start_ms, length_ms))
        raise PermanentFailure("not audio")


def _upload(partials: Partials, owner_id: str, seconds: int) -> Upload:
    upload_id = new_unguessable_id()
    partials.create(upload_id)
    partials.path(upload_id).write_bytes(b"a" * seconds * 1000)
    return Upload(id=upload_id, owner_id=owner_id, length=10**9, received=seconds * 1000,
                  deferred=True, filename="Recording.webm", language=None, space=None,
                  created_at="", expires_at="", record_id=None)


def _actor(tmp_path: Path, clock: FakeClock, recognizer: FakeVoiceRecognizer,
           transcoder: FakeTranscoder | None = None) -> tuple[LiveText, Partials]:
    partials = Partials(tmp_path)
    return LiveText(partials=partials, transcoder=transcoder or FakeTranscoder(),
                    recognizer=recognizer, clock=clock), partials


async def test_uploads_take_turns_a_window_at_a_time(tmp_path: Path) -> None:
    recognizer = FakeVoiceRecognizer(text="words")
    live, partials = _actor(tmp_path, FakeClock(), recognizer)
    alice = _upload(partials, ALICE, 40)
    bob = _upload(partials, BOB, 40)
    live.ask(alice)
    live.ask(bob)
    await live.catch_up()
    # Three windows each (40 s, cut within each window's last 3 s): alternating.
    assert len(recognizer.commands) == 6
    assert live.ask(alice).text == live.ask(bob).text == "words words words"
    assert live.ask(alice).heard_ms > 2 * (WINDOW_MS - 3000)


async def test_a_persons_newer_upload_replaces_the_one_followed(tmp_path: Path) -> None:
    recognizer = FakeVoiceRecognizer(text="first")
    live, partials = _actor(tmp_path, FakeClock(), recognizer)
    older = _upload(partials, ALICE, 20)
    live.ask(older)
    await live.catch_up()
    assert live.ask(older).text == "first"
    newer = _upload(partials, ALICE, 5)
    assert live.ask(newer).text == ""
    # The older one starts over if asked again: it was no longer followed.
    assert live.ask(older).text == ""


async def test_an_upload_nobody_asks_about_is_forgotten(tmp_path: Path) -> None:
    clock = FakeClock()
    recognizer = FakeVoiceRecognizer(text="kept")
    live, partials = _actor(tmp_path, clock, recognizer)
    upload = _upload(partials, ALICE, 20)
    live.ask(upload)
    await live.catch_up()
    clock.advance(FORGET_SECONDS - 1)
    await live.catch_up()
    assert live.ask(upload).text == "kept"
    clock.advance(FORGET_SECONDS + 1)
    await live.catch_up()
    assert live.ask(upload).text == ""


async def test_an_unreadable_or_finished_upload_is_not_decoded_again(tmp_path: Path) -> None:
    recognizer = FakeVoiceRecognizer()
    transcoder = Unreadable()
    live, partials = _actor(tmp_path, FakeClock(), recognizer, transcoder)
    upload = _upload(partials, ALICE, 20)
    live.ask(upload)
    await live.catch_up()
    live.ask(upload)
    await live.catch_up()
    assert recognizer.commands == []
    # Given up after the first answer: the second ask decodes nothing.
    assert len(transcoder.decoded) == 1
    finished = _upload(partials, BOB, 20)
    answer = live.ask(replace(finished, record_id="01jabcdefghjkmnpqrstvwxyz0"))
    await live.catch_up()
    assert answer.record_id == "01jabcdefghjkmnpqrstvwxyz0"
    assert recognizer.commands == []
    assert len(transcoder.decoded) == 1  # a finished upload is not wanted
