"""The extractive describer's topics (docs/describer.md "Topics"): the owner's topics
said in any of their word forms, else key phrases said again, else a message's one
phrase said once. Pure: the same sentences, the same topics.

Words are compared by their Snowball stems (`transcriber.domain.search`), so «финансов»
is the owner's «Финансы» and "finances" their "Finance"; words of time and manner
(`stopwords.is_vague`) are never a topic's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from transcriber.domain import describe as descriptions
from transcriber.domain.search import TextWord, words
from transcriber.providers.describe.stopwords import VAGUE_STEMS, is_stop

NEW_TOPICS_MAX = 3
PHRASE_WORDS_MAX = 3
SHORT_WORDS = 200
"""Content words of a transcript under which an owner's topic counts if said once."""
MESSAGE_WORDS = 60
"""Content words of a transcript under which it is a message (about a minute of speech):
it is about one thing, so it gets at most `MESSAGE_TOPICS_MAX` topic of its own, from
words said once when none was said again."""
MESSAGE_TOPICS_MAX = 1


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence of the transcript with its words (`extractive.split` makes them)."""

    text: str
    words: tuple[TextWord, ...]
    content: tuple[str, ...]
    """The stems of its content words, in order."""


def topics_of(sentences: Sequence[Sentence], tf: Counter[str], idf: dict[str, float],
              owner_topics: Sequence[str], central: frozenset[int]) -> list[str]:
    """The owner's topics said prominently; else key phrases said again; else, for a
    message, the phrase that names what its central sentences are about."""
    said = sum(tf.values())
    least = 1 if said < SHORT_WORDS else 2 + said // 5000
    owned = owner_topics_said(tf, idf, owner_topics, least=least)
    if owned:
        return owned
    message = said < MESSAGE_WORDS
    found = key_phrases(sentences, idf, central,
                        limit=MESSAGE_TOPICS_MAX if message else NEW_TOPICS_MAX)
    if found or not message:
        return found
    return said_once(sentences, idf, central)


def owner_topics_said(tf: Counter[str], idf: dict[str, float], owner_topics: Sequence[str],
                      *, least: int) -> list[str]:
    """The owner's topics each of whose content words was said at least `least` times in
    any of its forms (the stems: "finances" is "Finance", «финансов» is «Финансы»), the
    most said first, as the owner writes them."""
    scored = []
    for name in owner_topics:
        stems = [word.stem for word in words(name) if not is_stop(word.form)] or \
            [word.stem for word in words(name)]
        if not stems:
            continue
        times = min(tf.get(stem, 0) for stem in stems)
        if times >= least:
            weight = sum(idf.get(stem, 1.0) for stem in stems) / len(stems)
            scored.append((-times * weight, name))
    return [name for _, name in sorted(scored)[:descriptions.TOPICS_MAX]]


def key_phrases(sentences: Sequence[Sentence], idf: dict[str, float],
                central: frozenset[int] = frozenset(), *, limit: int = NEW_TOPICS_MAX) -> list[str]:
    """Up to `limit` key phrases: runs of 2–3 content words said at least twice, by how
    often (twice over in the `central` sentences), how long and how rare in the owner's
    archive, of equals the one that ends a run more often (a phrase's head comes last:
    "распознавание русской речи" over "проверяем распознавание русской"); then single
    words said at least three times. A phrase inside a chosen one, holding it, or
    overlapping it ("a b c" and "b c d") counts as that one unless said more than twice
    as often."""
    runs = [(number, run) for number, sentence in enumerate(sentences)
            for run in _runs(sentence)]
    # Counted in C (zip makes the n-grams, Counter.update counts them): hours of speech
    # have tens of thousands of them.
    times: Counter[tuple[str, ...]] = Counter()
    weight: Counter[tuple[str, ...]] = Counter()
    ends: Counter[tuple[str, ...]] = Counter()
    for number, run in runs:
        stems = [word.stem for word in run]
        for size in range(1, PHRASE_WORDS_MAX + 1):
            grams = list(zip(*(stems[at:] for at in range(size)), strict=False))
            times.update(grams)
            if number in central:
                weight.update(grams)
            if len(stems) >= size:
                ends[tuple(stems[-size:])] += 1
    weight.update(times)

    def rank(key: tuple[str, ...]) -> tuple[float, int, tuple[str, ...]]:
        return -weight[key] * sum(idf.get(stem, 1.0) for stem in key), -ends[key], key

    phrases = sorted((key for key, count in times.items()
                      if count >= 2 and len(key) > 1 and len(set(key)) == len(key)), key=rank)
    singles = sorted((key for key, count in times.items() if count >= 3 and len(key) == 1),
                     key=rank)
    chosen: list[tuple[str, ...]] = []
    for key in (*phrases, *singles):
        if len(chosen) == limit:
            break
        if any(_overlapping(key, other) and times[key] <= 2 * times[other]
               for other in chosen):
            continue
        chosen.append(key)
    return _named(sentences, runs, chosen)


def said_once(sentences: Sequence[Sentence], idf: dict[str, float],
              central: frozenset[int]) -> list[str]:
    """A message's subject when nothing was said twice: of the phrases that end
    a run of content words in its central sentences (the head of a phrase comes last in
    both languages' noun phrases: "the invoice", «распознавание русской речи»), the one
    of most, longest and rarest words; none when no such phrase is left."""
    runs = [(number, run) for number, sentence in enumerate(sentences)
            if number in central for run in _runs(sentence)]
    best: tuple[float, int, tuple[str, ...]] | None = None
    for number, run in runs:
        for size in range(1, min(PHRASE_WORDS_MAX, len(run)) + 1):
            tail = run[-size:]
            key = tuple(word.stem for word in tail)
            if len(set(key)) < size:
                continue
            score = sum(idf.get(word.stem, 1.0) * (1.0 if len(word.form) >= 5 else 0.5)
                        for word in tail)
            if best is None or (-score, number, key) < (-best[0], best[1], best[2]):
                best = (score, number, key)
    return [] if best is None else _named(sentences, runs, [best[2]])


def _named(sentences: Sequence[Sentence], runs: Sequence[tuple[int, list[TextWord]]],
           chosen: Sequence[tuple[str, ...]]) -> list[str]:
    """How each chosen phrase is written, read again for those few only."""
    surfaces: dict[tuple[str, ...], Counter[tuple[str, bool]]] = {
        key: Counter() for key in chosen}
    for number, run in runs:
        sentence = sentences[number]
        for key in chosen:
            size = len(key)
            for at in range(len(run) - size + 1):
                if tuple(word.stem for word in run[at:at + size]) == key:
                    opening = run[at] is sentence.words[0]
                    surfaces[key][sentence.text[run[at].start:run[at + size - 1].end],
                                  opening] += 1
    return [_name(surfaces[key]) for key in chosen]


def _runs(sentence: Sentence) -> list[list[TextWord]]:
    """Runs of consecutive content words (a stop word, a vague word or a punctuation mark
    ends one)."""
    runs: list[list[TextWord]] = [[]]
    previous = None
    for word in sentence.words:
        broken = previous is not None and sentence.text[previous.end:word.start].strip()
        # A word of time or manner ("today", «сегодня») ends a run too: never a topic's.
        said = word.stem not in VAGUE_STEMS and not is_stop(word.form)
        if (not said or broken) and runs[-1]:
            runs.append([])
        if said:
            runs[-1].append(word)
        previous = word
    return [run for run in runs if run]


def _overlapping(one: tuple[str, ...], other: tuple[str, ...]) -> bool:
    """One phrase inside the other, or one's end the other's start ("a b c", "b c d")."""
    if one == other:
        return True
    if len(one) < len(other):
        one, other = other, one
    size = len(other)
    if any(one[at:at + size] == other for at in range(len(one) - size + 1)):
        return True
    return any(one[-cut:] == other[:cut] or other[-cut:] == one[:cut]
               for cut in range(1, size))


def _name(surfaces: Counter[tuple[str, bool]]) -> str:
    """A phrase as it is most often written, each word in lower case unless it was
    capitalized every time it was said other than at a sentence's start (a name:
    "Moscow office", not "Office" for a sentence that opens with it)."""
    written: Counter[str] = Counter()
    for (surface, _), count in surfaces.items():
        written[surface] += count
    common = max(written.items(), key=lambda item: (item[1], item[0]))[0].split()
    inside = [surface.split() for surface, opening in surfaces if not opening]
    return " ".join(
        word if inside and all(len(other) == len(common) and other[at][:1].isupper()
                               for other in inside) else word.lower()
        for at, word in enumerate(common))
