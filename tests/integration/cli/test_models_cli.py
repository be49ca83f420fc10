"""`transcriber models add|list|verify`, and a record routed to a GigaAM folder through
the whole pipeline (`transcriber transcribe`): parts stitched on the record's timeline,
subtitles by their rules, the card's model, a tampered folder refused."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import orjson
import pytest

from tests.helpers.archive import kept_logging
from tests.helpers.gigaam_model import build_model
from tests.helpers.settings import SettingsFactory
from tests.helpers.subtitles import check_subtitle_rules
from transcriber.cli import main
from transcriber.cli.transcribe import transcribe
from transcriber.core.errors import ConfigError, PermanentFailure, TransientFailure
from transcriber.domain.transcripts import load_structure
from transcriber.ports import AudioPart
from transcriber.providers.gigaam import GigaamModel
from transcriber.providers.routed import RoutedRecognizer
from transcriber.settings import Settings

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "audio"
WORDS = [("привет", 5), ("мир", 20)]


def _config(tmp_path: Path, models: Path) -> Path:
    config = tmp_path / "transcriber.toml"
    config.write_text(f'[storage]\ndata_dir = "{tmp_path / "data"}"\n'
                      f'[recognizer]\nmodels_dir = "{models}"\n'
                      'routes = {ru = "gigaam-v3"}\n', encoding="utf-8")
    return config


def test_models_add_list_and_verify(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # `main` points logging at the captured streams: the set-up is put back after.
    with kept_logging():
        _add_list_and_verify(tmp_path, capsys, monkeypatch)


def _add_list_and_verify(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                         monkeypatch: pytest.MonkeyPatch) -> None:
    fetched = build_model(tmp_path / "fetched" / "gigaam-v3", WORDS)
    (fetched / "manifest.json").unlink()  # as the publisher gives it
    models = tmp_path / "models"
    config = str(_config(tmp_path, models))
    # Asked to confirm the hashes: "no" adds nothing.
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    assert main(["models", "add", str(fetched), "--config", config]) == 1
    shown = capsys.readouterr().out
    assert "v3_ctc.onnx" in shown
    assert "publisher" in shown
    assert not (models / "gigaam-v3").exists()
    assert main(["models", "add", str(fetched), "--yes", "--config", config]) == 0
    assert (models / "gigaam-v3" / "manifest.json").is_file()
    capsys.readouterr()
    assert main(["models", "list", "--config", config]) == 0
    listed = capsys.readouterr().out
    assert "gigaam-v3\tgigaam-onnx\tru\troutes: ru\tmanifest ok" in listed
    assert main(["models", "verify", "--config", config]) == 0
    assert "verified" in capsys.readouterr().out
    with (models / "gigaam-v3" / "v3_ctc.onnx").open("ab") as handle:
        handle.write(b"\0")
    assert main(["models", "verify", "--config", config]) == 1
    assert "gigaam-v3/v3_ctc.onnx does not match its SHA-256" in capsys.readouterr().out


def _routed(make_settings: SettingsFactory, models: Path, whisper_model: Path,
            **recognizer: object) -> tuple[Settings, RoutedRecognizer]:
    settings = make_settings(
        pipeline={"workers": 0, "idle_sleep_seconds": 0.02, "poll_first_delay_seconds": 0.0,
                  "poll_delay_seconds": 0.02},
        recognizer={"models_dir": models, "routes": {"ru": "gigaam-v3"},
                    "model_dir": whisper_model, **recognizer})
    return settings, RoutedRecognizer(settings.recognizer, cache_dir=whisper_model,
                                      default_time_limit_seconds=600)


async def test_a_russian_record_is_recognized_by_the_routed_gigaam_folder(
    make_settings: SettingsFactory, tmp_path: Path, whisper_model: Path,
) -> None:
    models = tmp_path / "models"
    build_model(models / "gigaam-v3", WORDS)
    # 17 s in parts of 10 s: two parts, each recognized by the model and joined.
    settings, recognizer = _routed(make_settings, models, whisper_model, part_seconds=10,
                                   diarization="off")
    out, err = io.StringIO(), io.StringIO()
    code = await transcribe(settings, [FIXTURES / "two_speakers.mp3"], fmt="json",
                            out=out, err=err, recognizer=recognizer, language="ru")
    assert code == 0, err.getvalue()
    utterances = load_structure(out.getvalue().strip())
    # The quality report says which model made the transcript.
    assert orjson.loads(out.getvalue())["quality"]["model"] == "gigaam-v3"
    words = [w for u in utterances for w in u.words]
    assert {w.text for w in words} == {"привет", "мир"}
    starts = [w.start_ms for w in words]
    assert starts == sorted(starts)
    assert starts[-1] > 10_000  # the second part's words, placed on the record's timeline
    srt_out = io.StringIO()
    code = await transcribe(settings, [FIXTURES / "two_speakers.mp3"], fmt="srt",
                            out=srt_out, err=err, recognizer=recognizer, language="ru")
    assert code == 0, err.getvalue()
    assert len(check_subtitle_rules(srt_out.getvalue(), "srt")) >= 2
    await recognizer.close()


async def test_a_route_to_a_folder_that_is_not_a_model_stops_the_start(
    make_settings: SettingsFactory, tmp_path: Path, whisper_model: Path,
) -> None:
    (tmp_path / "models" / "gigaam-v3").mkdir(parents=True)
    with pytest.raises(ConfigError, match=r"recognizer.routes.ru.*no manifest.json"):
        _routed(make_settings, tmp_path / "models", whisper_model)


async def test_a_folder_with_two_gigaam_exports_is_refused_on_add_and_at_start(
    make_settings: SettingsFactory, tmp_path: Path, whisper_model: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fetched = build_model(tmp_path / "fetched" / "gigaam-v3", WORDS)
    build_model(fetched, WORDS, export="rnnt")  # the CTC export and the RNN-T one
    (fetched / "manifest.json").unlink()
    models = tmp_path / "models"
    with kept_logging():
        assert main(["models", "add", str(fetched), "--yes",
                     "--config", str(_config(tmp_path, models))]) == 1
    assert "more than one GigaAM export" in capsys.readouterr().err
    assert not (models / "gigaam-v3").exists()
    build_model(models / "gigaam-v3", WORDS)
    build_model(models / "gigaam-v3", WORDS, export="rnnt")  # its manifest lists both
    with pytest.raises(ConfigError, match=r"recognizer.routes.ru.*more than one GigaAM"):
        _routed(make_settings, models, whisper_model)


async def test_a_tampered_routed_folder_is_refused_and_never_loads(
    make_settings: SettingsFactory, tmp_path: Path, whisper_model: Path,
) -> None:
    models = tmp_path / "models"
    folder = build_model(models / "gigaam-v3", WORDS)
    (folder / "v3_vocab.txt").write_text("<blk> 0\n", encoding="utf-8")
    _, recognizer = _routed(make_settings, models, whisper_model)
    part = AudioPart(path=FIXTURES / "festival_ru.m4a", uri=None, duration_ms=4500,
                     language="ru")
    with pytest.raises(TransientFailure, match=r"gigaam-v3/v3_vocab\.txt does not match"):
        await recognizer.submit(part)
    gigaam = recognizer.routes["ru"]
    assert isinstance(gigaam, GigaamModel)
    assert gigaam.release() is False  # never loaded
    await recognizer.close()


async def test_a_part_naming_a_model_goes_to_it_routed_or_not(
    make_settings: SettingsFactory, tmp_path: Path, whisper_model: Path,
) -> None:
    models = tmp_path / "models"
    build_model(models / "gigaam-v3", WORDS)
    build_model(models / "gigaam-other", [("мир", 3)], name="gigaam-other")
    _, recognizer = _routed(make_settings, models, whisper_model)
    part = AudioPart(path=FIXTURES / "festival_ru.m4a", uri=None, duration_ms=4500,
                     language="en", model="gigaam-other")
    try:
        answer = recognizer.parse((await recognizer.submit(part)).payload or b"")
        assert answer.model == "gigaam-other"
        assert [w.text for u in answer.utterances for w in u.words] == ["мир"]
        with pytest.raises(PermanentFailure, match="cannot be used"):
            await recognizer.submit(dataclasses.replace(part, model="absent"))
    finally:
        await recognizer.close()
