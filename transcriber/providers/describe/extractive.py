"""The extractive describer: a title, a brief and topics taken from the transcript itself,
offline, with no model, the same answer for the same transcript and archive.

- **Words.** Each sentence's words are read by `transcriber.domain.search` (the search's
  normalization: folded, Snowball-stemmed), stop words and fillers of both languages
  left out (`providers/describe/stopwords.py`). A stem weighs `(1 + log tf) · idf`,
  where the idf is from the owner's archive: a word every recording of the owner
  has ("budget" in a finance team's calls) says little about this one.
- **Centrality.** Sentences are nodes of a graph whose edges are the cosine
  similarities of their weighted stems (LexRank's continuous graph); a sentence's
  score is its PageRank there. The graph is never built: with the sentences' unit
  vectors as rows of `S`, one step of the power iteration is `S (Sᵀ x)` less the
  self-loops, so a 3-hour meeting (thousands of sentences) costs sentences × stems,
  not sentences² (`tests/bench/test_describer.py` measures it).
- **Title.** The opening phrase of the most central sentence (fillers in front left
  out, ending at its first clause break, at most `TITLE_WORDS_MAX` words within
  `describe.TITLE_MAX`); none when the transcript is itself no longer than a
  title, or the phrase would be all it says (it would be said twice).
- **Brief.** A transcript that is itself short (three sentences, 400 characters, each
  sentence once) is its own brief; otherwise the 1–3 most central sentences other than
  the title's (one for a recording under a minute, two under ten, three beyond), none
  repeating another, in the order they were said.
- **Topics.** `transcriber.providers.describe.topics`: the owner's topics whose word forms
  occur prominently; else key phrases said again; else a message's one phrase.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from transcriber.domain import describe as descriptions
from transcriber.domain.describe import Description
from transcriber.domain.search import TextWord, fold, words
from transcriber.ports import ArchiveCounts, Material, Utterance
from transcriber.providers.describe.stopwords import is_stop
from transcriber.providers.describe.topics import Sentence, topics_of

NAME = "extractive"
VOCABULARY_MAX = 2000
"""Stems weighed at most (the most frequent): bounds the matrix of a 6-hour record."""
SENTENCE_WORDS_MAX = 40
"""A longer run without a full stop (a recognizer that writes no punctuation) is cut here."""
CENTRAL_SENTENCES = 5
"""A key phrase said in one of the most central sentences counts twice."""
DAMPING = 0.85
ITERATIONS_MAX = 60
SIMILAR = 0.5
"""A brief sentence this similar to one already taken repeats it and is skipped."""
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


def split(utterances: Sequence[Utterance]) -> list[Sentence]:
    """The transcript's sentences with their words; overlong runs cut."""
    found: list[Sentence] = []
    for utterance in utterances:
        for text in descriptions.sentences(utterance.text):
            found.extend(_pieces(text))
    return found


def _pieces(text: str) -> list[Sentence]:
    read = words(text)
    if len(read) <= SENTENCE_WORDS_MAX:
        return [_sentence(text, read)]
    pieces = []
    for at in range(0, len(read), SENTENCE_WORDS_MAX):
        chunk = read[at:at + SENTENCE_WORDS_MAX]
        piece = text[chunk[0].start:chunk[-1].end]
        pieces.append(_sentence(piece, words(piece)))
    return pieces


def _sentence(text: str, read: list[TextWord]) -> Sentence:
    return Sentence(text=text, words=tuple(read),
                     content=tuple(word.stem for word in read if not is_stop(word.form)))


def _vocabulary(sentences: Sequence[Sentence]) -> list[str]:
    tf = Counter(stem for sentence in sentences for stem in sentence.content)
    return [stem for stem, _ in tf.most_common(VOCABULARY_MAX)]


def describe_sentences(sentences: Sequence[Sentence], *, material: Material,
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
    topics = topics_of(sentences, tf, idf, material.owner_topics,
                       frozenset(order[:CENTRAL_SENTENCES]))
    return descriptions.fitted(title=title, brief=brief, topics=topics,
                               owner_topics=material.owner_topics, by=NAME)


def _idf(vocabulary: Sequence[str], counts: ArchiveCounts) -> dict[str, float]:
    records = max(counts.records, 1)
    return {stem: math.log((1 + records) / (1 + counts.holding.get(stem, 0))) + 1.0
            for stem in vocabulary}


def _sentence_vectors(sentences: Sequence[Sentence], vocabulary: Sequence[str],
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
    with np.errstate(all="ignore"):  # BLAS flags: see `centrality`
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        np.divide(matrix, norms, out=matrix, where=norms > 0)
    matrix[~np.isfinite(matrix).all(axis=1)] = 0.0
    return matrix


def centrality(matrix: np.ndarray) -> np.ndarray:
    """PageRank over the graph of cosine similarities between the rows (no self-loops),
    in `rows × columns` per step: `W x = S (Sᵀ x) − diag(S Sᵀ) x`, never `W` itself."""
    count = matrix.shape[0]
    if count == 1:
        return np.ones(1)
    # OpenBLAS kernels can leave the CPU's floating-point flags set on finite input,
    # which numpy then reports as "… encountered in matmul" (numpy issues 24067 and
    # 29820; seen once here under load): the flags are ignored and the result checked.
    with np.errstate(all="ignore"):
        own = np.einsum("ij,ij->i", matrix, matrix).astype(np.float64)
        degree = matrix @ (matrix.T @ np.ones(count, dtype=np.float32)) - own
        degree = np.maximum(degree, 0.0)
        dangling = degree <= 1e-9
        rank = np.full(count, 1.0 / count)
        for _ in range(ITERATIONS_MAX):
            share = np.where(dangling, 0.0, rank / np.where(dangling, 1.0, degree))
            spread = matrix @ (matrix.T @ share.astype(np.float32)) - own * share
            lost = rank[dangling].sum()
            following = ((1 - DAMPING) / count
                         + DAMPING * (np.maximum(spread, 0.0) + lost / count))
            following /= following.sum()
            moved = np.abs(following - rank).sum()
            rank = following
            if moved < 1e-7:
                break
    if not np.isfinite(rank).all():
        return np.full(count, 1.0 / count)
    return rank


def _ranked(sentences: Sequence[Sentence], scores: np.ndarray) -> list[int]:
    """Sentence indexes best first: the score, lowered for a sentence of one or two
    content words ("Yes, exactly.") and for a question, ties to the earlier sentence."""
    def weight(at: int) -> float:
        content = len(sentences[at].content)
        question = 0.5 if sentences[at].text.endswith("?") else 1.0
        return float(scores[at]) * question * (1.0 if content >= 3 else 0.25 if content else 0.01)
    return sorted(range(len(sentences)), key=lambda at: (-weight(at), at))


def title_of(sentence: Sentence, said: Sequence[Sentence]) -> str:
    """The title: the opening phrase of the most central sentence — none when the
    transcript (each sentence once) is itself no longer than a title, or when the phrase
    would be all it says: a card and a TXT export would say it twice."""
    # The sentences are clean already (`describe.sentences`): their lengths add up.
    if sum(len(part.text) + 1 for part in said) - 1 <= descriptions.TITLE_MAX:
        return ""
    title = opening_words(sentence)
    titled = [word.form for word in words(title)]
    if len(titled) != sum(len(part.words) for part in said):
        return title
    everything = [word.form for part in said for word in part.words]
    return "" if titled == everything else title


def opening_words(sentence: Sentence) -> str:
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
    elif len(kept) == len(read) - skip:  # every word fits: the sentence, to its last word
        return descriptions.fit_title(sentence.text[start:read[-1].end])
    else:
        kept = kept[:TITLE_WORDS_MAX]
    while len(kept) > 1 and is_stop(kept[-1].form):
        kept.pop()
    return descriptions.fit_title(sentence.text[start:kept[-1].end])


def _distinct(sentences: Sequence[Sentence]) -> list[Sentence]:
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


def _similarity(matrix: np.ndarray, one: int, other: int) -> float:
    """The cosine of two unit rows (BLAS flags ignored as in `centrality`)."""
    with np.errstate(all="ignore"):
        value = float(matrix[one] @ matrix[other])
    return value if math.isfinite(value) else 0.0


def _brief(sentences: Sequence[Sentence], order: Sequence[int], matrix: np.ndarray, *,
           top: int, duration_ms: int, said: Sequence[Sentence]) -> str:
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
        if any(_similarity(matrix, at, other) > SIMILAR for other in (top, *chosen)):
            continue
        chosen.append(at)
        room -= len(text) + 1
    if not chosen:
        chosen = [top]
    return " ".join(sentences[at].text for at in sorted(chosen))
