"""Hard recordings where Whisper invents text (the corpus's second half, beside
`hard_audio.py`): monotone synthetic speech (espeak-ng), a minute of a music-like bed or
of crowd-like noise between two stretches of speech, applause and laughter-like bursts
over speech, and a recording whose middle is one sentence a person says again and again
(a real repetition the guard must keep).

Each carries its known text, where its stretches without speech lie (no word may be
there) and how many times a phrase follows itself in the audio (the most a transcript
may repeat one).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import hard_audio
from tests.helpers.hard_audio import RATE, SPEECH_DBFS, at_level, decode, music_bed, noise
from transcriber.providers.whisper_repeats import REPEATS_KEPT, loops, token

# Varied sentences read in one go by espeak-ng (its own pauses between them): the
# monotone voice on which Whisper base loops («я не пойду» 23 times, issue 38).
ESPEAK_RUSSIAN = (
    "Сегодня утром я проснулся раньше обычного и долго смотрел в окно.",
    "На улице шёл мелкий дождь, и прохожие прятались под зонтами.",
    "Я сварил кофе, съел бутерброд с сыром и открыл ноутбук.",
    "В почте было три письма от коллег и одно от старого друга.",
    "Друг писал, что приедет в наш город в конце месяца.",
    "Мы не виделись почти пять лет, с тех пор как он переехал на север.",
    "Я ответил, что буду рад встрече, и предложил сходить в театр.",
    "Потом я позвонил маме и спросил, как она себя чувствует.",
    "Она сказала, что всё хорошо, только немного болит спина.",
    "Днём я работал над отчётом для руководства компании.",
    "Отчёт получился длинным, в нём было много таблиц и графиков.",
    "Начальник попросил сократить его до десяти страниц.",
    "Вечером я пошёл в спортивный зал и занимался почти два часа.",
    "После тренировки я встретил соседа, который выгуливал собаку.",
    "Собака была большая и очень дружелюбная, она сразу подбежала ко мне.",
    "Мы немного поговорили о погоде и о ремонте дороги возле дома.",
    "Сосед сказал, что дорогу обещают закончить только осенью.",
    "Дома я приготовил ужин: рис с овощами и куриную грудку.",
    "Потом я читал книгу о путешествиях по Южной Америке.",
    "Автор описывал горы, реки и маленькие деревни в джунглях.",
    "Мне захотелось когда-нибудь поехать туда самому.",
    "Перед сном я проверил прогноз погоды на завтра.",
    "Обещали солнце и тёплый ветер с юга.",
    "Я поставил будильник на семь часов и выключил свет.",
    "Завтра будет важная встреча с новыми клиентами из Казани.",
    "Они хотят заказать у нас большую партию оборудования.",
    "Если всё пройдёт хорошо, мы выполним годовой план уже в сентябре.",
    "Директор обещал премию всей команде за хорошую работу.",
    "Я надеюсь, что переговоры пройдут спокойно и без споров.",
    "В любом случае, я не пойду на компромисс по срокам поставки.",
)
ESPEAK_ENGLISH = (
    "This morning I woke up earlier than usual and looked out of the window.",
    "A light rain was falling and people were hiding under their umbrellas.",
    "I made some coffee, ate a cheese sandwich and opened my laptop.",
    "There were three letters from colleagues and one from an old friend.",
    "My friend wrote that he would come to our town at the end of the month.",
    "We have not seen each other for almost five years.",
    "I answered that I would be glad to meet and suggested going to the theatre.",
    "Then I called my mother and asked how she was feeling.",
    "She said that everything was fine, only her back hurt a little.",
    "In the afternoon I worked on a report for the management.",
    "The report turned out long, with many tables and charts.",
    "My manager asked me to cut it down to ten pages.",
    "In the evening I went to the gym and trained for almost two hours.",
    "After the workout I met a neighbour who was walking his dog.",
    "The dog was big and very friendly and ran straight up to me.",
    "We talked a little about the weather and the road works near the house.",
    "At home I cooked dinner, rice with vegetables and a chicken breast.",
    "Then I read a book about travelling in South America.",
    "Before going to bed I checked the weather forecast for tomorrow.",
    "I set the alarm for seven o'clock and switched off the light.",
)
SPEECH_LEVEL = SPEECH_DBFS
GAP_MARGIN_S = 1.0  # a word may lie this far into a stretch without speech (alignment)


def have_espeak() -> bool:
    return shutil.which("espeak-ng") is not None


def require_espeak() -> None:
    """Skip without espeak-ng; under CI (`.ci/dev test` installs it) fail instead."""
    if have_espeak():
        return
    if os.environ.get("CI"):
        pytest.fail("espeak-ng is missing under CI")
    pytest.skip("needs espeak-ng")


@functools.cache
def espeak(language: str, text: str) -> np.ndarray:
    """espeak-ng's reading of `text` on its defaults (monotone, 150 words a minute)."""
    with tempfile.TemporaryDirectory() as folder:
        source, wav = Path(folder) / "text.txt", Path(folder) / "speech.wav"
        source.write_text(text + "\n", encoding="utf-8")
        subprocess.run(["espeak-ng", "-v", language, "-s", "150", "-f", str(source),
                        "-w", str(wav)], check=True, capture_output=True)
        return decode(wav)


def espeak_speech(language: str, seconds: float) -> hard_audio.Speech:
    """Whole sentences of the varied text, in a cycle, read in one go, about `seconds`
    long (espeak reads about 14 sentences a minute)."""
    sentences = ESPEAK_RUSSIAN if language == "ru" else ESPEAK_ENGLISH
    count = max(1, round(seconds / 60 * 14))
    text = " ".join(sentences[i % len(sentences)] for i in range(count))
    return hard_audio.Speech(samples=espeak(language, text), text=text)


@dataclass(frozen=True, slots=True, kw_only=True)
class Invented:
    """A recording Whisper is known to invent text on."""

    path: Path
    text: str
    language: str
    duration_s: float
    speech_end_s: float
    no_speech: tuple[tuple[float, float], ...]  # stretches where no word may be
    repeats: int  # the most times a phrase follows itself in the audio


def most_repeats(text: str) -> int:
    """The most times a phrase follows itself in `text` (at least `REPEATS_KEPT`)."""
    found = loops([t for t in (token(w) for w in text.split()) if t])
    return max([REPEATS_KEPT, *(loop.copies for loop in found)])


def _write(samples: np.ndarray, target: Path) -> None:
    pcm = (np.clip(samples, -1, 1) * 32767).astype(np.int16).tobytes()
    subprocess.run([hard_audio._ffmpeg(), "-nostdin", "-loglevel", "error", "-y", "-f",
                    "s16le", "-ar", str(RATE), "-ac", "1", "-i", "-", str(target)],
                   input=pcm, check=True)


def crowd(seconds: float, *, seed: int = 5) -> np.ndarray:
    """Crowd-like noise: pink noise in the voice band, its level moved at syllable rates
    by many overlapping talkers' envelopes, at unit RMS (no words in it)."""
    bed = hard_audio._filtered(noise("pink", seconds, seed=seed), "-af",
                               "highpass=f=200,lowpass=f=3500")
    rng = np.random.default_rng(seed)
    t = np.arange(bed.size) / RATE
    envelope = sum(1 + np.sin(2 * np.pi * rng.uniform(3, 6) * t + rng.uniform(0, 6.3))
                   for _ in range(8))
    made = bed * np.asarray(envelope)
    out: np.ndarray = (made / np.sqrt((made ** 2).mean() + 1e-12)).astype(np.float32)
    return out


def bursts(seconds: float, *, seed: int = 9) -> np.ndarray:
    """Applause (dense short clicks of noise) and laughter-like bursts (a voiced 250-Hz
    "ha" pulsed five times a second), alternating, each 2-3 s, 4 s apart, unit RMS."""
    rng = np.random.default_rng(seed)
    out = np.zeros(int(seconds * RATE), dtype=np.float32)
    at, laugh = 2.0, False
    while at + 3 < seconds:
        length = rng.uniform(2.0, 3.0)
        t = np.arange(int(length * RATE)) / RATE
        if laugh:
            voiced = np.sign(np.sin(2 * np.pi * 250 * t)) * 0.5 + np.sin(2 * np.pi * 500 * t)
            piece = voiced * np.clip(np.sin(2 * np.pi * 5 * t), 0, None) ** 2
        else:
            clicks = (rng.random(t.size) < 0.004).astype(np.float32)
            piece = np.convolve(clicks * rng.standard_normal(t.size),
                                np.exp(-np.arange(80) / 12), mode="same")
        piece = piece * np.hanning(piece.size)
        first = int(at * RATE)
        out[first:first + piece.size] += piece.astype(np.float32)
        at += length + 4.0
        laugh = not laugh
    scaled: np.ndarray = out / np.sqrt((out ** 2).mean() + 1e-12)
    return scaled


Make = Callable[[float, Path], Invented]


def _espeak(language: str) -> Make:
    def make(seconds: float, target: Path) -> Invented:
        speech = espeak_speech(language, seconds)
        samples = at_level(speech.samples, SPEECH_LEVEL)
        _write(samples, target)
        return Invented(path=target, text=speech.text, language=language,
                        duration_s=samples.size / RATE, speech_end_s=samples.size / RATE,
                        no_speech=(), repeats=most_repeats(speech.text))
    return make


def between(kind: str, gap_s: float) -> Make:
    """Natural English speech, `gap_s` of a music bed or crowd noise (no voice), the
    rest of the speech."""
    def make(seconds: float, target: Path) -> Invented:
        speech = hard_audio.continuous(hard_audio.english_sentences(), seconds)
        voiced = at_level(speech.samples, SPEECH_LEVEL)
        half = voiced.size // 2
        bed = music_bed(gap_s) if kind == "music" else crowd(gap_s)
        middle = at_level(bed, SPEECH_LEVEL - 6)
        joined = np.concatenate([voiced[:half], middle, voiced[half:]])
        start = half / RATE
        _write(joined, target)
        return Invented(path=target, text=speech.text, language="en",
                        duration_s=joined.size / RATE, speech_end_s=joined.size / RATE,
                        no_speech=((start + GAP_MARGIN_S, start + gap_s - GAP_MARGIN_S),),
                        repeats=most_repeats(speech.text))
    return make


def _applause(seconds: float, target: Path) -> Invented:
    speech = hard_audio.continuous(hard_audio.english_sentences(), seconds)
    voiced = at_level(speech.samples, SPEECH_LEVEL)
    over = voiced + bursts(voiced.size / RATE) * 10 ** ((SPEECH_LEVEL - 10) / 20)
    _write(over, target)
    return Invented(path=target, text=speech.text, language="en",
                    duration_s=over.size / RATE, speech_end_s=over.size / RATE,
                    no_speech=(), repeats=most_repeats(speech.text))


REPEATED_KEY = "0880"  # "he was not an ill disposed young man"
REPEATED_TIMES = 6
REPEATED_PAUSE_S = 0.8


def _repeated(seconds: float, target: Path) -> Invented:
    """Natural speech, one sentence said `REPEATED_TIMES` times with pauses between (a
    real repetition), natural speech again."""
    sentences = hard_audio.english_sentences()
    half = hard_audio.continuous(sentences, seconds / 2)
    voiced = at_level(half.samples, SPEECH_LEVEL)
    sentence = sentences[hard_audio.ENGLISH_ORDER.index(REPEATED_KEY)]
    pause = np.zeros(int(REPEATED_PAUSE_S * RATE), dtype=np.float32)
    said = at_level(sentence.samples, SPEECH_LEVEL)
    middle = [part for _ in range(REPEATED_TIMES) for part in (pause, said)]
    joined = np.concatenate([voiced, *middle, pause, voiced])
    text = " ".join([half.text, *[sentence.text] * REPEATED_TIMES, half.text])
    _write(joined, target)
    return Invented(path=target, text=text, language="en", duration_s=joined.size / RATE,
                    speech_end_s=joined.size / RATE, no_speech=(),
                    repeats=most_repeats(text))


CONDITIONS: dict[str, tuple[str, Make]] = {
    "espeak_russian": ("ru", _espeak("ru")),
    "espeak_english": ("en", _espeak("en")),
    "music_between": ("en", between("music", 60.0)),
    "crowd_between": ("en", between("crowd", 60.0)),
    "applause_laughter": ("en", _applause),
    "repeated_sentence": ("en", _repeated),
}


def require(name: str) -> None:
    if name.startswith("espeak"):
        require_espeak()
    else:
        hard_audio.require(CONDITIONS[name][0])


def words_in(answer: dict, spans: Sequence[tuple[float, float]]) -> list[str]:  # type: ignore[type-arg]
    """The answer's words whose times fall inside any of `spans` (seconds)."""
    return [str(w["text"]) for s in answer["segments"] for w in s.get("words") or ()
            if any(a <= w["start_ms"] / 1000 <= b or a <= w["end_ms"] / 1000 <= b
                   for a, b in spans)]
