"""Whisper from the operator's models folder: the bundled model's own files copied into
a folder with a manifest, routed to, verified and loaded by that path for real; its
answers equal the packaged path's, and a changed file refuses the folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from tests.helpers.audio import FIXTURES
from tests.helpers.settings import SettingsFactory
from transcriber.core.errors import TransientFailure
from transcriber.ports import AudioPart
from transcriber.providers.model_folder import WHISPER_CT2, manifest_of
from transcriber.providers.routed import RoutedRecognizer
from transcriber.providers.whisper import WhisperRecognizer

NAME = "whisper-base-copy"


def _copy(whisper_model: Path, models: Path) -> Path:
    folder = models / NAME
    shutil.copytree(whisper_model, folder)
    manifest = manifest_of(folder, name=NAME, kind=WHISPER_CT2, languages=())
    (folder / "manifest.json").write_bytes(manifest.to_json())
    return folder


def _said(payload: bytes | None) -> list[tuple[str, int, int]]:
    assert payload is not None
    return [(s["text"], s["start_ms"], s["end_ms"]) for s in orjson.loads(payload)["segments"]]


async def test_the_folder_path_gives_the_packaged_paths_answers(
    make_settings: SettingsFactory, tmp_path: Path, whisper_model: Path,
    whisper: WhisperRecognizer,
) -> None:
    models = tmp_path / "models"
    _copy(whisper_model, models)
    settings = make_settings(recognizer={"models_dir": models, "routes": {"en": NAME},
                                         "model_dir": whisper_model})
    routed = RoutedRecognizer(settings.recognizer, cache_dir=whisper_model,
                              default_time_limit_seconds=600)
    part = AudioPart(path=FIXTURES / "espeak_en.ogg", uri=None, duration_ms=6000,
                     language="en", words=True)
    try:
        from_folder = await routed.submit(part)
        packaged = await whisper.submit(part)
        target = routed.routes["en"]
        assert isinstance(target, WhisperRecognizer)
        assert target.model == NAME  # loaded from the folder, not the base
        assert target._model is not None
        assert routed.base._model is None
        assert _said(from_folder.payload) == _said(packaged.payload)
        assert "lazy dog" in str(_said(from_folder.payload)).lower()
        assert routed.parse(from_folder.payload or b"").model == NAME
    finally:
        await routed.close()


async def test_a_changed_file_refuses_the_whisper_folder(
    make_settings: SettingsFactory, tmp_path: Path, whisper_model: Path,
) -> None:
    models = tmp_path / "models"
    folder = _copy(whisper_model, models)
    with (folder / "config.json").open("a", encoding="utf-8") as handle:
        handle.write(" ")
    settings = make_settings(recognizer={"models_dir": models, "routes": {"en": NAME},
                                         "model_dir": whisper_model})
    routed = RoutedRecognizer(settings.recognizer, cache_dir=whisper_model,
                              default_time_limit_seconds=600)
    part = AudioPart(path=FIXTURES / "espeak_en.ogg", uri=None, duration_ms=6000,
                     language="en")
    try:
        with pytest.raises(TransientFailure, match=r"whisper-base-copy/config\.json does not"):
            await routed.submit(part)
    finally:
        await routed.close()
