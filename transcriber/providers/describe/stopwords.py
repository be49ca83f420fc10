"""Words that say nothing about what a recording is about, in Russian and English, as
folded forms (`search.fold`: lower case, ё as е).

The base is the Snowball project's own stop lists (snowballstem.org, the
`russian/stop.txt` and `english/stop.txt` of the stemmers `wordforms` uses), with
the pieces an apostrophe leaves of English contractions (`don't` is the words
`don` and `t` to the tokenizer), and the fillers of speech a written list lacks
(«ну», «типа», «короче», "yeah", "gonna"): transcripts are speech. A list kept
here rather than a package: the `stop-words` package is not in the index this
project installs from, `many-stop-words` has not changed since 2017, and NLTK's
lists come as a data download at run time (no download may happen offline).
"""

from __future__ import annotations

from transcriber.domain.search import fold, stem

_RUSSIAN = """
и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только
ее мне было вот от меня еще нет о из ему теперь когда даже ну вдруг ли если уже или ни
быть был него до вас нибудь опять уж вам ведь там потом себя ничего ей может они тут где
есть надо ней для мы тебя их чем была сам чтоб без будто чего раз тоже себе под будет ж
тогда кто этот того потому этого какой совсем ним здесь этом один почти мой тем чтобы нее
сейчас были куда зачем всех никогда можно при наконец два об другой хоть после над больше
тот через эти нас про всего них какая много разве три эту моя впрочем хорошо свою этой
перед иногда лучше чуть том нельзя такой им более всегда конечно всю между
это эта эти этим этими эту тех той те та то тому такая такое такие так также тоже
который которая которое которые которых котором которой которому которую
мой моя мое мои моих твой твоя твое твои свой своя свое свои своих своей своего своим
наш наша наше наши нашей нашего нашим ваш ваша ваше ваши вашей вашего
весь вся всем всеми сам сама само сами самый самая самое
будут буду будем будешь будете был были было была быть есть является
могу можем может можете могут мог могла могли нужно надо можно нельзя
один одна одно одни одного одной два две три четыре пять
ко обо ото изо надо подо передо
вот ну типа короче значит вообще просто прям прямо вроде кстати например собственно
слушай слушайте смотри смотрите давай давайте ладно окей ок ага угу ой ах эх эм э ээ м мм
хм понятно понял поняла поняли наверное кажется думаю знаешь знаете скажем говорю говорит
сказал сказала сказать допустим получается видимо вопрос спасибо пожалуйста привет здравствуйте
очень совсем лишь сюда туда оттуда откуда почему зачем сколько столько снова опять иногда
где когда куда как чем что кто чего чему кого кому какие какое каких каким
да нет не ни ли же бы ведь уж вот
"""

_ENGLISH = """
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
she her hers herself it its itself they them their theirs themselves what which who whom
this that these those am is are was were be been being have has had having do does did
doing would should could ought a an the and but if or because as until while of at by for
with about against between into through during before after above below to from up down in
out on off over under again further then once here there when where why how all any both
each few more most other some such no nor not only own same so than too very
s t re ve ll d m don isn aren wasn weren hasn haven hadn doesn didn won wouldn shan shouldn
can cannot couldn mustn let
will shall may might must can could
yeah yes yep nope okay ok oh um uh uhm hmm mm ah hey hi hello bye thanks thank please
like just really well right actually basically literally kind sort maybe perhaps also even
still much many lot lots thing things something anything everything nothing stuff way
gonna wanna gotta get gets got getting go goes going went gone know knew think thought
mean means say says said see saw look looks let lets make made want need come came
one two three four five first guys everyone everybody anyone someone
"""

RUSSIAN: frozenset[str] = frozenset(fold(word) for word in _RUSSIAN.split())
ENGLISH: frozenset[str] = frozenset(fold(word) for word in _ENGLISH.split())
STOP_FORMS: frozenset[str] = RUSSIAN | ENGLISH


def is_stop(form: str) -> bool:
    """A folded word that carries no subject: a stop word, a number, a single letter."""
    return form in STOP_FORMS or len(form) < 2 or form.isdigit()


# Words that say when or how, not what: a sentence keeps them (they weigh in its
# centrality and stay in a title), but a topic is never made of them («сегодня», "next
# week"). Compared by stem, so every form of a word is one («неделе», «недели»).
_VAGUE = """
сегодня завтра вчера послезавтра позавчера утро утром день днем вечер вечером ночь ночью
неделя месяц год час минута секунда время раз сейчас скоро потом позже раньше пока
следующий прошлый этот весь каждый всегда уже отлично итак хорошо ладно
today tomorrow yesterday tonight morning afternoon evening night day week month year hour
minute second time times now soon later earlier next last every today's
okay alright anyway great good fine sure
"""
VAGUE_STEMS: frozenset[str] = frozenset(stem(fold(word)) for word in _VAGUE.split())


def is_vague(word_stem: str) -> bool:
    """A stem of time or manner (`_VAGUE`): kept in sentences, never a topic's word."""
    return word_stem in VAGUE_STEMS
