"""The local recognizer with a model per language (`recognizer.routes`).

A part goes to the model its language routes to (the record's language, else the
`recognizer.language` setting); a part whose language is `auto` is recognized by the
bundled model first, and when the language it heard routes elsewhere, again by that
model (docs/recognition.md, "Models from a folder": the cost of a detected route is
one extra decoding of the part; give the language to avoid it). Every other language
goes to the bundled model. All of them share one pool of model runs, so at most
`recognizer.concurrency` run at once, the speaker engine included.

Each routed model's folder is checked for shape when the service starts (a route to a
missing or malformed folder, or to a GigaAM folder without exactly one export, stops it
with a `ConfigError`) and verified file by file
before every load (a changed file refuses it: the part fails and is retried, the
`model_refused` event names the model).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import threading
import time
from pathlib import Path

import structlog

from transcriber.core.errors import ConfigError, PermanentFailure
from transcriber.core.ids import new_id
from transcriber.core.observability import PROVIDER_CALL_SECONDS
from transcriber.ports import Answer, AudioPart, Capabilities, Span, Submitted
from transcriber.providers.gigaam import GigaamModel
from transcriber.providers.model_folder import (
    GIGAAM_ONNX,
    ModelRefused,
    gigaam_export,
    load_verified,
    model_folder,
    read_manifest,
)
from transcriber.providers.recognizers import LOCAL, whisper_language
from transcriber.providers.whisper import WhisperRecognizer, batched_speech
from transcriber.settings import RecognizerSettings

log = structlog.get_logger(__name__)

RouteTarget = WhisperRecognizer | GigaamModel


def build_routes(settings: RecognizerSettings, *, cache_dir: Path,
                 default_time_limit_seconds: float,
                 base: WhisperRecognizer) -> dict[str, RouteTarget]:
    """Each routed language's model, not loaded (its manifest read, its files not yet
    hashed); `ConfigError` for a route to a folder that is not a model."""
    routes: dict[str, RouteTarget] = {}
    loaded: dict[str, RouteTarget] = {}
    models_dir = settings.models_dir
    if models_dir is None:
        return routes
    for language, name in sorted(settings.routes.items()):
        if name in loaded:
            routes[language] = loaded[name]
            continue
        try:
            folder = model_folder(models_dir, name)
            manifest = read_manifest(folder)
            if manifest.kind == GIGAAM_ONNX:
                gigaam_export(manifest.files, folder=name)  # one export, by its files
        except ModelRefused as exc:
            raise ConfigError(f"recognizer.routes.{language}", str(exc)) from None
        target: RouteTarget
        if manifest.kind == GIGAAM_ONNX:
            target = GigaamModel(models_dir=models_dir, name=name, language=language,
                                 model_runs=base.model_runs)
        else:
            target = WhisperRecognizer(
                dataclasses.replace(settings, model_dir=folder), cache_dir=cache_dir,
                default_time_limit_seconds=default_time_limit_seconds,
                model_runs=base.model_runs,
                check=functools.partial(load_verified, models_dir, name))
        loaded[name] = routes[language] = target
    return routes


def _name_of(target: RouteTarget) -> str:
    return target.model if isinstance(target, WhisperRecognizer) else target.name


class RoutedRecognizer:
    """The `Recognizer` port over the bundled Whisper and the routed models."""

    provider = LOCAL
    payload_ext = ".json"

    def __init__(self, settings: RecognizerSettings, *, cache_dir: Path,
                 default_time_limit_seconds: float) -> None:
        self._settings = settings
        self.base = WhisperRecognizer(settings, cache_dir=cache_dir,
                                      default_time_limit_seconds=default_time_limit_seconds)
        self.model_runs = self.base.model_runs
        self._cache_dir = cache_dir
        self._default_limit = default_time_limit_seconds
        self._named_models: dict[str, RouteTarget] = {}
        self.routes = build_routes(settings, cache_dir=cache_dir,
                                   default_time_limit_seconds=default_time_limit_seconds,
                                   base=self.base)

    @property
    def capabilities(self) -> Capabilities:
        return self.base.capabilities

    @property
    def model(self) -> str:
        return self.base.model

    def time_limit_seconds(self, duration_ms: int | None) -> float | None:
        # A detected route decodes the part twice.
        limit = self.base.time_limit_seconds(duration_ms)
        return None if limit is None else limit * 2

    def _named(self, name: str) -> RouteTarget | None:
        """The model a re-transcription named (None: the bundled one); a folder no route
        uses is made ready once, checked when it loads like any other."""
        if name == self.base.model:
            return None
        for target in self.routes.values():
            if _name_of(target) == name:
                return target
        if name not in self._named_models:
            settings = dataclasses.replace(self._settings, routes={"*": name})
            try:
                made = build_routes(settings, cache_dir=self._cache_dir,
                                    default_time_limit_seconds=self._default_limit,
                                    base=self.base)
            except ConfigError as exc:
                raise PermanentFailure(f"the model asked for cannot be used: {exc}") from None
            self._named_models[name] = made["*"]
        return self._named_models[name]

    async def submit(self, part: AudioPart) -> Submitted:
        if part.model is not None:
            named = self._named(part.model)
            if named is None:
                return await self.base.submit(part)
            return await self._submit_to(named, part)
        language = whisper_language(part.language, self._settings.language)
        target = self.routes.get(language) if language is not None else None
        log.debug("recognition_routed", language=language, routed=target is not None)
        if target is None:
            submitted = await self.base.submit(part)
            heard = (self.base.parse(submitted.payload).language
                     if language is None and submitted.payload is not None else None)
            if heard is None or heard not in self.routes:
                return submitted
            log.info("recognition_rerouted", language=heard)
            # The speech was already handed on by the first decoding.
            return await self._submit_to(self.routes[heard],
                                         dataclasses.replace(part, language=heard,
                                                             on_speech=None))
        return await self._submit_to(target, part)

    async def _submit_to(self, target: RouteTarget, part: AudioPart) -> Submitted:
        if isinstance(target, WhisperRecognizer):
            return await target.submit(part)
        if part.path is None:
            raise PermanentFailure("the local recognizer needs a local file")
        cancel = threading.Event()
        started = time.perf_counter()
        try:
            payload = await self.model_runs.run(self._gigaam, target, part, cancel)
        except asyncio.CancelledError:
            cancel.set()
            raise
        finally:
            PROVIDER_CALL_SECONDS.labels(LOCAL, "recognize").observe(
                time.perf_counter() - started)
        return Submitted(external_id=f"local-{new_id()}", payload=payload)

    @staticmethod
    def _gigaam(model: GigaamModel, part: AudioPart, cancel: threading.Event) -> bytes:
        assert part.path is not None
        audio, regions = batched_speech(part.path)
        if part.on_speech is not None:
            part.on_speech([Span(start_ms=round(a * 1000), end_ms=round(b * 1000))
                            for a, b in regions], audio)
        return model.recognize(audio, regions, cancel, part.terms)

    async def fetch(self, external_id: str) -> bytes | None:
        return await self.base.fetch(external_id)

    def parse(self, payload: bytes) -> Answer:
        return self.base.parse(payload)

    async def warm(self) -> None:
        await self.base.warm()

    def release_model(self) -> bool:
        released = self.base.release_model()
        for target in set(self.routes.values()):
            released = (target.release_model() if isinstance(target, WhisperRecognizer)
                        else target.release()) or released
        return released

    async def close(self) -> None:
        self.model_runs.close()
