"""Names from the vocabulary: recall with and without it, and the WER of the rest (issue 45).

Sentences each holding one rare name (people, companies, products) are synthesized
here (English: espeak-ng; Russian: Festival's msu_ru_nsh voice) and recognized by the
service's own recognizer on the bundled Whisper base, once with no terms and once with
the vocabulary (every name of the set, as a person would keep them: the recognizer is
told all of them for every sentence, so a name is never given away by its sentence).
Name recall: the share of the names' words found, spelled as the vocabulary spells
them (case and punctuation aside); the rest: the WER of sentences that hold none of
the names, decoded with and without the same vocabulary (what a prompt could spoil);
and the WER of the named sentences with the names' words left out of the reference
and the recognition (a name heard wrong still counts there, as the word it became).

Run: `PYTHONPATH=$PWD pytest -m bench -s -p no:cacheprovider tests/bench/test_vocabulary.py`
(the table in docs/recognition.md, "Vocabulary").
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import hard_audio
from tests.helpers.textmetrics import wer
from tests.helpers.whisper import MakeWhisper
from transcriber.ports import AudioPart
from transcriber.providers.whisper import WhisperRecognizer
from transcriber.settings import RecognizerSettings

pytestmark = pytest.mark.bench

# (sentence, the name in it)
ENGLISH = (
    ("Please send the signed contract to Siobhan before Friday.", "Siobhan"),
    ("Our new supplier is called Quizlr and they ship from Ohio.", "Quizlr"),
    ("The meeting with Zbigniew was moved to next Tuesday.", "Zbigniew"),
    ("We migrated every project from Jenkins to Buildkite last month.", "Buildkite"),
    ("Ask Oluwaseun to review the budget for the second quarter.", "Oluwaseun"),
    ("The invoice from Xiomara arrived late again this week.", "Xiomara"),
    ("Tadhg will present the new design to the board tomorrow.", "Tadhg"),
    ("Their analytics run on Snowplow and the reports go out daily.", "Snowplow"),
)
# No name in them: what the vocabulary must not make worse.
ENGLISH_PLAIN = (
    "The weather was cold and the train was late again.",
    "We will finish the report after lunch and send it to everyone.",
    "Please close the window before you leave the office.",
    "The numbers for the last quarter look better than we expected.",
)
RUSSIAN_PLAIN = (
    "Погода была холодной, и поезд снова опоздал.",
    "Мы закончим отчёт после обеда и разошлём его всем.",
    "Пожалуйста, закройте окно перед уходом из офиса.",
    "Цифры за последний квартал выглядят лучше, чем мы ожидали.",
)
RUSSIAN = (
    ("Передайте подписанный договор Евлампию до пятницы.", "Евлампию"),
    ("Наш новый поставщик называется Кварцтех и работает в Казани.", "Кварцтех"),
    ("Встречу с Пантелеймоном перенесли на следующий вторник.", "Пантелеймоном"),
    ("Попросите Агриппину проверить бюджет на второй квартал.", "Агриппину"),
    ("Счёт от компании Зерносбыт снова пришёл с опозданием.", "Зерносбыт"),
    ("Феоктист завтра покажет совету новый макет.", "Феоктист"),
    ("Отчёты строит Криштопенко и рассылает их каждый день.", "Криштопенко"),
    ("Мы перевели все проекты на платформу Бризнет в прошлом месяце.", "Бризнет"),
)


def _synthesize(language: str, text: str, target: Path) -> Path:
    if language == "en":
        subprocess.run(["espeak-ng", "-v", "en-us", "-s", "150", "-w", str(target), text],
                       check=True, capture_output=True)
    else:
        source = target.with_suffix(".txt")
        source.write_text(text + "\n", encoding="utf-8")
        subprocess.run(["text2wave", "-eval", "(voice_msu_ru_nsh_clunits)", str(source),
                        "-o", str(target)], check=True, capture_output=True)
    return target


def _words(text: str) -> list[str]:
    return re.sub(r"[^\w\s]", " ", text.lower().replace("ё", "е")).split()


def _without(text: str, names: set[str]) -> str:
    return " ".join(w for w in _words(text) if w not in names)


def _heard(recognizer: WhisperRecognizer, wav: Path, language: str,
           terms: tuple[str, ...]) -> str:
    submitted = asyncio.run(recognizer.submit(AudioPart(
        path=wav, uri=None, duration_ms=5000, language=language, terms=terms)))
    return " ".join(u.text for u in recognizer.parse(submitted.payload or b"").utterances)


def _measure(make_whisper: MakeWhisper, language: str, folder: Path,
             terms: tuple[str, ...]) -> tuple[float, float, float]:
    """(name recall, WER of the sentences without names, WER of the named ones' rest)."""
    sentences = ENGLISH if language == "en" else RUSSIAN
    plain = ENGLISH_PLAIN if language == "en" else RUSSIAN_PLAIN
    recognizer = make_whisper(RecognizerSettings())
    names = {w for _, name in sentences for w in _words(name)}
    found = total = 0
    rest: list[float] = []
    controls: list[float] = []
    try:
        for number, (text, name) in enumerate(sentences):
            wav = folder / f"{language}{number}.wav"
            if not wav.exists():
                _synthesize(language, text, wav)
            heard = _heard(recognizer, wav, language, terms)
            got = _words(heard)
            found += sum(1 for w in _words(name) if w in got)
            total += len(_words(name))
            rest.append(wer(_without(text, names), _without(heard, names)))
        for number, text in enumerate(plain):
            wav = folder / f"{language}-plain{number}.wav"
            if not wav.exists():
                _synthesize(language, text, wav)
            controls.append(wer(text, _heard(recognizer, wav, language, terms)))
    finally:
        asyncio.run(recognizer.close())
    return found / total, sum(controls) / len(controls), sum(rest) / len(rest)


@pytest.mark.parametrize("language", ["en", "ru"])
def test_the_vocabulary_brings_names_back(make_whisper: MakeWhisper, tmp_path: Path,
                                          language: str) -> None:
    if language == "ru":
        hard_audio.require("ru")
    elif shutil.which("espeak-ng") is None:
        pytest.skip("needs espeak-ng")
    terms = tuple(name for _, name in (ENGLISH if language == "en" else RUSSIAN))
    plain_recall, plain_control, plain_rest = _measure(make_whisper, language, tmp_path, ())
    told_recall, told_control, told_rest = _measure(make_whisper, language, tmp_path, terms)
    print(f"\n| {language} | {plain_recall:.0%} | {told_recall:.0%} | {plain_control:.1%} | "
          f"{told_control:.1%} | {plain_rest:.1%} | {told_rest:.1%} |")
    assert told_recall > plain_recall
    assert told_control <= plain_control + 0.02
    assert told_rest <= plain_rest + 0.02
