"""The extractive describer: a title, a brief and topics taken from the transcript itself,
offline, with no model, the same answer for the same transcript and archive.

- **Words.** Each sentence's words are read by `transcriber.wordforms` (the search's
  normalization: folded, Snowball-stemmed), stop words and fillers of both languages
  left out (`transcriber.stopwords`). A stem weighs `(1 + log tf) · idf`, where the idf
  is from the owner's archive: a word every recording of the owner has ("budget" in a
  finance team's calls) says little about this one.
- **Centrality.** Sentences are nodes of a graph whose edges are the cosine
  similarities of their weighted stems (LexRank's continuous graph); a sentence's
  score is its PageRank there. The graph is never built: with the sentences' unit
  vectors as rows of `S`, one step of the power iteration is `S (Sᵀ x)` less the
  self-loops, so a 3-hour meeting (thousands of sentences) costs sentences × stems,
  not sentences² (`tests/bench/test_describer.py` measures it).
- **Title.** The opening words of the most central sentence (fillers in front left
  out), within `descriptions.TITLE_MAX`.
- **Brief.** A transcript that is itself short (three sentences, 400 characters) is
  its own brief; otherwise the 1–3 most central sentences other than the title's (one
  for a recording under a minute, two under ten, three beyond), none repeating
  another, in the order they were said.
- **Topics.** The owner's topics whose word forms occur prominently; when none does,
  up to `NEW_TOPICS_MAX` key phrases (runs of 1–3 content words said at least twice),
  so a 5-second message adds no topic of its own to the owner's list.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from transcriber import descriptions
from transcriber.descriptions import Description
from transcriber.ports import ArchiveCounts, Material, Utterance
from transcriber.stopwords import is_stop, is_vague
from transcriber.wordforms import Word, fold, words

NAME = "extractive"
VOCABULARY_MAX = 2000
"""Stems weighed at most (the most frequent): bounds the matrix of a 6-hour record."""
SENTENCE_WORDS_MAX = 40
"""A longer run without a full stop (a recognizer that writes no punctuation) is cut here."""
NEW_TOPICS_MAX = 3
CENTRAL_SENTENCES = 5
"""A key phrase said in one of the most central sentences counts twice."""
PHRASE_WORDS_MAX = 3
DAMPING = 0.85
ITERATIONS_MAX = 60
SIMILAR = 0.5
"""A brief sentence this similar to one already taken repeats it and is skipped."""
SHORT_WORDS = 200
"""Content words of a transcript under which an owner's topic counts if said once."""
MESSAGE_WORDS = 60
"""Content words of a transcript under which it is a message (about a minute of speech):
it is about one thing, so it gets at most `MESSAGE_TOPICS_MAX` topic of its own, from
words said once when none was said again."""
MESSAGE_TOPICS_MAX = 1
TITLE_WORDS_MAX = 10
"""A title is a phrase: a longer sentence ends at a clause break, else at this word."""
TITLE_WORDS_MIN = 4
"""Words a clause must have before its break for the title to end there."""
# Words that open a spoken sentence without belonging to its subject.
_OPENER_WORDS = """
so well okay ok now right yeah yes and but also then um uh oh alright anyway great good fine
итак ну так вот значит короче ладно хорошо отлично да нет и а но слушай смотри давайте давай
"""
_OPENERS = frozenset(fold(word) for word in _OPENER_WORDS.split())
_CLAUSE_RE = re.compile(r"\s*[,;:—–]")


@dataclass(frozen=True, slots=True)
class _Sentence:
    text: str
    words: tuple[Word, ...]
    content: tuple[str, ...]
    """The stems of its content words, in order."""


class ExtractiveDescriber:
    name = NAME

    async def describe(self, material: Material) -> Description:
        # The stemmer and numpy would hold the loop for a fraction of a second on hours
        # of speech: a thread, so the writer and the doors keep answering meanwhile.
        sentences = await asyncio.to_thread(split, material.utterances)
        counts = ArchiveCounts()
        if material.archive is not None:
            stems = _vocabulary(sentences)
            if stems:
                counts = await material.archive.counts(stems)
        return await asyncio.to_thread(describe_sentences, sentences, material=material,
                                       counts=counts)


def split(utterances: Sequence[Utterance]) -> list[_Sentence]:
    """The transcript's sentences with their words; overlong runs cut."""
    found: list[_Sentence] = []
    for utterance in utterances:
        for text in descriptions.sentences(utterance.text):
            found.extend(_pieces(text))
    return found


def _pieces(text: str) -> list[_Sentence]:
    read = words(text)
    if len(read) <= SENTENCE_WORDS_MAX:
        return [_sentence(text, read)]
    pieces = []
    for at in range(0, len(read), SENTENCE_WORDS_MAX):
        chunk = read[at:at + SENTENCE_WORDS_MAX]
        piece = text[chunk[0].start:chunk[-1].end]
        pieces.append(_sentence(piece, words(piece)))
    return pieces


def _sentence(text: str, read: list[Word]) -> _Sentence:
    return _Sentence(text=text, words=tuple(read),
                     content=tuple(word.stem for word in read if not is_stop(word.form)))


def _vocabulary(sentences: Sequence[_Sentence]) -> list[str]:
    tf = Counter(stem for sentence in sentences for stem in sentence.content)
    return [stem for stem, _ in tf.most_common(VOCABULARY_MAX)]


def describe_sentences(sentences: Sequence[_Sentence], *, material: Material,
                       counts: ArchiveCounts) -> Description:
    """The description of a transcript's sentences (pure: the same input, the same answer)."""
    if not sentences:
        return descriptions.fitted(title="", brief="", topics=(),
                                   owner_topics=material.owner_topics, by=NAME)
    tf = Counter(stem for sentence in sentences for stem in sentence.content)
    vocabulary = [stem for stem, _ in tf.most_common(VOCABULARY_MAX)]
    idf = _idf(vocabulary, counts)
    matrix = _sentence_vectors(sentences, vocabulary, idf)
    scores = centrality(matrix)
    order = _ranked(sentences, scores)
    top = order[0]
    said = _distinct(sentences)
    title = title_of(sentences[top], said)
    brief = _brief(sentences, order, matrix, top=top, duration_ms=material.duration_ms,
                   said=said)
    topics = _topics(sentences, tf, idf, material.owner_topics,
                     frozenset(order[:CENTRAL_SENTENCES]))
    return descriptions.fitted(title=title, brief=brief, topics=topics,
                               owner_topics=material.owner_topics, by=NAME)


def _idf(vocabulary: Sequence[str], counts: ArchiveCounts) -> dict[str, float]:
    records = max(counts.records, 1)
    return {stem: math.log((1 + records) / (1 + counts.holding.get(stem, 0))) + 1.0
            for stem in vocabulary}


def _sentence_vectors(sentences: Sequence[_Sentence], vocabulary: Sequence[str],
                      idf: dict[str, float]) -> np.ndarray:
    """Unit rows of `(1 + log tf) · idf` per sentence (a row of zeros: no content word)."""
    column = {stem: at for at, stem in enumerate(vocabulary)}
    rows, cols = [], []
    for row, sentence in enumerate(sentences):
        for stem in sentence.content:
            at = column.get(stem)
            if at is not None:
                rows.append(row)
                cols.append(at)
    matrix = np.zeros((len(sentences), len(vocabulary)), dtype=np.float32)
    np.add.at(matrix, (np.asarray(rows, dtype=np.intp), np.asarray(cols, dtype=np.intp)), 1.0)
    held = matrix > 0
    matrix[held] = 1.0 + np.log(matrix[held])
    matrix *= np.asarray([idf[stem] for stem in vocabulary], dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    return matrix


def centrality(matrix: np.ndarray) -> np.ndarray:
    """PageRank over the graph of cosine similarities between the rows (no self-loops),
    in `rows × columns` per step: `W x = S (Sᵀ x) − diag(S Sᵀ) x`, never `W` itself."""
    count = matrix.shape[0]
    if count == 1:
        return np.ones(1)
    own = np.einsum("ij,ij->i", matrix, matrix).astype(np.float64)
    degree = matrix @ (matrix.T @ np.ones(count, dtype=np.float32)) - own
    degree = np.maximum(degree, 0.0)
    dangling = degree <= 1e-9
    rank = np.full(count, 1.0 / count)
    for _ in range(ITERATIONS_MAX):
        share = np.where(dangling, 0.0, rank / np.where(dangling, 1.0, degree))
        spread = matrix @ (matrix.T @ share.astype(np.float32)) - own * share
        lost = rank[dangling].sum()
        following = (1 - DAMPING) / count + DAMPING * (np.maximum(spread, 0.0) + lost / count)
        following /= following.sum()
        moved = np.abs(following - rank).sum()
        rank = following
        if moved < 1e-7:
            break
    return rank


def _ranked(sentences: Sequence[_Sentence], scores: np.ndarray) -> list[int]:
    """Sentence indexes best first: the score, lowered for a sentence of one or two
    content words ("Yes, exactly.") and for a question, ties to the earlier sentence."""
    def weight(at: int) -> float:
        content = len(sentences[at].content)
        question = 0.5 if sentences[at].text.endswith("?") else 1.0
        return float(scores[at]) * question * (1.0 if content >= 3 else 0.25 if content else 0.01)
    return sorted(range(len(sentences)), key=lambda at: (-weight(at), at))


def title_of(sentence: _Sentence, said: Sequence[_Sentence]) -> str:
    """The title: the opening phrase of the most central sentence — none when the
    transcript (each sentence once) is itself no longer than a title, or when the phrase
    would be all it says: a card and a TXT export would say it twice."""
    whole = " ".join(part.text for part in said)
    if len(descriptions.clean(whole)) <= descriptions.TITLE_MAX:
        return ""
    title = opening_words(sentence)
    everything = [word.form for part in said for word in part.words]
    return "" if [word.form for word in words(title)] == everything else title


def opening_words(sentence: _Sentence) -> str:
    """A sentence's opening phrase, fillers in front left out: it ends at the first clause
    break after `TITLE_WORDS_MIN` words; else it is the whole sentence when that fits a
    title, or its first `TITLE_WORDS_MAX` words within the title's characters, without the
    stop words a cut leaves hanging ("…the Android version a")."""
    read = sentence.words
    if not read:
        return descriptions.fit_title(sentence.text)
    skip = 0
    while skip < len(read) - 1 and read[skip].form in _OPENERS:
        skip += 1
    start = read[skip].start
    kept = [word for word in read[skip:] if word.end - start <= descriptions.TITLE_MAX]
    if not kept:
        return descriptions.fit_title(sentence.text[start:])
    breaks = [at for at, word in enumerate(kept[:-1]) if at + 1 >= TITLE_WORDS_MIN
              and _CLAUSE_RE.match(sentence.text, word.end)]
    if breaks and breaks[0] < TITLE_WORDS_MAX:
        kept = kept[:breaks[0] + 1]
    elif len(kept) == len(read) - skip:
        return descriptions.fit_title(sentence.text[start:])  # the whole sentence fits
    else:
        kept = kept[:TITLE_WORDS_MAX]
    while len(kept) > 1 and is_stop(kept[-1].form):
        kept.pop()
    return descriptions.fit_title(sentence.text[start:kept[-1].end])


def _distinct(sentences: Sequence[_Sentence]) -> list[_Sentence]:
    """The sentences once each (by their words): a message said again, or repeated by the
    recognizer, says no more than once."""
    seen: set[tuple[str, ...]] = set()
    kept = []
    for sentence in sentences:
        key = tuple(word.form for word in sentence.words)
        if key not in seen:
            seen.add(key)
            kept.append(sentence)
    return kept


def _brief(sentences: Sequence[_Sentence], order: Sequence[int], matrix: np.ndarray, *,
           top: int, duration_ms: int, said: Sequence[_Sentence]) -> str:
    whole = " ".join(sentence.text for sentence in said)
    if len(said) <= descriptions.BRIEF_SENTENCES_MAX and len(whole) <= descriptions.BRIEF_MAX:
        return whole
    wanted = 1 if duration_ms < 60_000 else 2 if duration_ms < 600_000 else 3
    room = descriptions.BRIEF_MAX
    chosen: list[int] = []
    for at in order:
        if len(chosen) == wanted:
            break
        text = sentences[at].text
        if at == top or not sentences[at].content or len(text) + 1 > room:
            continue
        if any(float(matrix[at] @ matrix[other]) > SIMILAR for other in (top, *chosen)):
            continue
        chosen.append(at)
        room -= len(text) + 1
    if not chosen:
        chosen = [top]
    return " ".join(sentences[at].text for at in sorted(chosen))


def _topics(sentences: Sequence[_Sentence], tf: Counter[str], idf: dict[str, float],
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


def key_phrases(sentences: Sequence[_Sentence], idf: dict[str, float],
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


def said_once(sentences: Sequence[_Sentence], idf: dict[str, float],
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


def _named(sentences: Sequence[_Sentence], runs: Sequence[tuple[int, list[Word]]],
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


def _runs(sentence: _Sentence) -> list[list[Word]]:
    """Runs of consecutive content words (a stop word, a vague word or a punctuation mark
    ends one)."""
    runs: list[list[Word]] = [[]]
    previous = None
    for word in sentence.words:
        broken = previous is not None and sentence.text[previous.end:word.start].strip()
        # A word of time or manner ("today", «сегодня») ends a run too: never a topic's.
        said = not is_stop(word.form) and not is_vague(word.stem)
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
