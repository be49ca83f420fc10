"""Transcripts the describer is tried on: meetings and voice messages in English and
Russian, as a recognizer writes them (punctuated sentences, one utterance per turn, two
speakers), and a 3-hour meeting made of them for the benchmark.

The short ones are what the fixture recordings say (tests/fixtures/audio/README.md).
The meetings were written for these tests, in the way such meetings go: greetings and
fillers, one subject talked through by two people, a few asides.
"""

from __future__ import annotations

from transcriber.ports import Utterance

VOICE_RU = "Привет. Сегодня мы проверяем распознавание русской речи."
VOICE_EN = "The quick brown fox jumps over the lazy dog. Our archive keeps every recording safe."

MEETING_EN = (
    "Okay, hi everyone, thanks for joining.",
    "Hi. So the main thing today is the release of the mobile app.",
    "Right. Where are we with the beta testing?",
    "The beta testing started on Monday with forty users from the support team.",
    "Forty users is a good start. What do they say about the mobile app so far?",
    "Most of the feedback is about the login screen, it takes too long to load.",
    "Yeah, the login screen was slow for me too on the old phone.",
    "We think the slow login screen comes from the analytics library we load at start.",
    "Can we load the analytics library after the login screen instead?",
    "Yes, that is the plan, the fix should be ready by Thursday.",
    "Good. Then the next question is the release date.",
    "If the fix lands on Thursday, the release of the mobile app can go out next Tuesday.",
    "Next Tuesday works for marketing, they want a week to prepare the announcement.",
    "What about the Android version, is it in the same release?",
    "The Android version needs one more round of beta testing, so it follows a week later.",
    "Fine. Who writes the release notes?",
    "I will write the release notes and send them to you on Friday.",
    "Let us also check the crash reports from the beta testing before we decide.",
    "The crash reports are mostly from the old phones, we have twelve of them this week.",
    "Twelve crash reports is not bad for a beta, but let us fix the top three.",
    "Agreed, the top three crash reports all come from the photo upload.",
    "Then the photo upload fix goes into the same release as the login screen.",
    "Okay. Anything else before we finish?",
    "Just one thing, the support team asks for a short guide to the new mobile app.",
    "Good idea, I will ask the support team what they need in the guide.",
    "Great, so the release of the mobile app is next Tuesday, the Android version a week later.",
    "Thanks everyone, bye.",
)

MEETING_RU = (
    "Так, всем привет, давайте начинать.",
    "Привет. Сегодня главный вопрос — переезд офиса в новое здание.",
    "Да. Что у нас с договором аренды нового офиса?",
    "Договор аренды подписали в пятницу, ключи дадут двадцатого числа.",
    "Отлично. А когда сам переезд офиса, уже решили?",
    "Предлагаю переезд на выходных, двадцать пятого и двадцать шестого.",
    "На выходных удобно, никто не работает, можно спокойно перевезти технику.",
    "Перевозку техники берёт транспортная компания, я уже запросил у них смету.",
    "Сколько стоит перевозка техники по смете транспортной компании?",
    "Смета на перевозку техники около ста двадцати тысяч рублей.",
    "Сто двадцать тысяч — это в рамках бюджета на переезд, нормально.",
    "Ещё нужно решить с интернетом в новом офисе, провайдер подключает за неделю.",
    "Значит, заявку провайдеру надо подать уже на этой неделе.",
    "Я подам заявку провайдеру сегодня и пришлю номер договора.",
    "Хорошо. Кто отвечает за мебель в новом офисе?",
    "Мебель в новом офисе уже стоит, её оставил прошлый арендатор.",
    "Надо проверить мебель, там были сломанные стулья.",
    "Я посмотрю мебель двадцатого, когда получим ключи.",
    "И ещё вопрос про парковку у нового здания, сотрудники спрашивают.",
    "Парковка у здания платная, но можно оформить пропуска для сотрудников.",
    "Давайте оформим пропуска на парковку для всех, кто ездит на машине.",
    "Хорошо, соберу список сотрудников для пропусков на парковку.",
    "Итак, переезд офиса на выходных двадцать пятого, технику везёт транспортная компания.",
    "Всем спасибо, до встречи.",
)

LECTURE_EN = (
    "Good morning. Today we continue with the history of the printing press.",
    "Last week we saw how paper came to Europe from China through the Arab world.",
    "Around 1450 Johannes Gutenberg in Mainz combined three things: movable metal type, "
    "an oil-based ink and a screw press.",
    "Movable metal type was the real invention, because each letter could be cast again "
    "and again in a hand mould.",
    "The hand mould let a printer cast thousands of identical letters in a day.",
    "The Gutenberg Bible, printed around 1455, shows how even the lines of movable type "
    "could be.",
    "Within fifty years the printing press spread to more than two hundred cities.",
    "Venice became the centre of the printing press, with Aldus Manutius and his small "
    "portable books.",
    "Cheap printed books changed who could read and what they could read.",
    "The Reformation spread with printed pamphlets, and the printing press made them "
    "cheap enough for everyone.",
    "Next week we look at how the printing press changed science.",
)

LECTURE_RU = (
    "Добрый день. Сегодня говорим о фотосинтезе у растений.",
    "Фотосинтез идёт в хлоропластах, в клетках листа.",
    "В хлоропластах есть хлорофилл, он поглощает красный и синий свет.",
    "Энергия света расщепляет воду, и из воды выделяется кислород.",
    "Этот кислород растение отдаёт в атмосферу, им мы и дышим.",
    "Вторая стадия фотосинтеза — цикл Кальвина, там углекислый газ превращается в сахар.",
    "Для цикла Кальвина нужна энергия, запасённая на световой стадии фотосинтеза.",
    "Скорость фотосинтеза зависит от света, температуры и углекислого газа.",
    "Поэтому в теплицах добавляют углекислый газ, и урожай растёт.",
    "На следующей лекции разберём дыхание растений.",
)


def utterances(lines: tuple[str, ...], *, start_ms: int = 0,
               ms_per_char: int = 60) -> list[Utterance]:
    """The lines as one utterance each, two speakers taking turns, timed by their length."""
    found = []
    at = start_ms
    for number, text in enumerate(lines):
        end = at + max(800, len(text) * ms_per_char)
        found.append(Utterance(start_ms=at, end_ms=end, channel=0, text=text,
                               speaker=f"S{number % 2 + 1}"))
        at = end + 300
    return found


def hours_of(lines: tuple[str, ...], hours: float) -> list[Utterance]:
    """A meeting of `hours`: the lines over and over, each round a little different
    (a number that changes), as a long meeting comes back to its subject."""
    found: list[Utterance] = []
    target = int(hours * 3_600_000)
    round_number = 0
    while not found or found[-1].end_ms < target:
        varied = tuple(f"{line[:-1]} ({round_number}){line[-1]}" if index % 5 == 0 else line
                       for index, line in enumerate(lines))
        start = found[-1].end_ms + 300 if found else 0
        found.extend(utterances(varied, start_ms=start))
        round_number += 1
    return [u for u in found if u.end_ms <= target] or found[:1]
