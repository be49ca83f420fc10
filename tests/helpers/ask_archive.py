"""An archive of meetings whose facts the tests know, and questions about them.

Eight meetings, four in English and four in Russian, on known days (the fake
clock's), with named speakers saying numbers, names and dates, and two more
(`DISTRACTORS`) that share their words without answering their questions. Each question
names the meeting and the line (the utterance index) that answers it. The
questions are worded as a person asks them, not copied from the line: other
forms of its words («поставщик» for «поставщиков»), other words around them,
days ("last month", «на этой неделе», «в январе») and speakers' names.

The transcripts are written directly (what the recognizer would have stored):
recognition is not what these measure (docs/ask.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True, slots=True, kw_only=True)
class Meeting:
    key: str
    day: str
    """YYYY-MM-DD: the record's day."""
    title: str
    speakers: dict[str, str]
    """Label → name."""
    lines: tuple[tuple[str, str], ...]
    """(label, text), in order."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Asked:
    question: str
    meeting: str
    line: int


TODAY = "2026-02-20"
"""The day the questions are asked (a Friday: "this week" is 16-22 February)."""

MEETINGS: tuple[Meeting, ...] = (
    Meeting(key="E1", day="2026-01-12", title="Supplier review",
            speakers={"S1": "Anna", "S2": "Boris", "S3": "Clara"}, lines=(
                ("S1", "Good morning everyone, let's start the supplier review."),
                ("S2", "The packaging supplier raised prices by twelve percent this quarter."),
                ("S1", "That is too much, we should ask the second supplier for a quote."),
                ("S3", "Northwind Logistics offered delivery within four days."),
                ("S2", "Their contract ends on the thirtieth of March."),
                ("S1", "We decided to sign with Northwind if the quote is below forty "
                       "thousand."),
                ("S3", "I will send the paperwork to the legal team on Friday."),
                ("S1", "Thanks, that's all for today."),
            )),
    Meeting(key="E2", day="2026-01-20", title="Hiring plan",
            speakers={"S1": "Dmitri", "S2": "Emma", "S3": "Frank"}, lines=(
                ("S1", "Let's go over the hiring plan for the spring."),
                ("S2", "We have budget for three engineers and one designer."),
                ("S1", "The designer should start before the product launch in May."),
                ("S2", "Interviews will run every Tuesday and Thursday afternoon."),
                ("S3", "I can take the technical interviews for the backend role."),
                ("S1", "Salary range for engineers is ninety to one hundred ten thousand."),
                ("S2", "The recruiting agency charges fifteen percent of the first year "
                       "salary."),
                ("S1", "Good, let's review candidates again next month."),
            )),
    Meeting(key="E3", day="2026-02-10", title="Office move",
            speakers={"S1": "Grace", "S2": "Henry"}, lines=(
                ("S1", "The lease on the old office expires at the end of June."),
                ("S2", "The new office on Baker Street has room for sixty people."),
                ("S1", "Rent there is eight thousand pounds a month."),
                ("S2", "Movers need two weekends to pack the servers and furniture."),
                ("S1", "The internet provider will install fiber on the second of June."),
                ("S2", "Parking is limited, so we will offer bicycle storage instead."),
                ("S1", "Everyone should clear their desks by the twentieth."),
            )),
    Meeting(key="E4", day="2026-02-17", title="Quarterly budget",
            speakers={"S1": "Anna", "S2": "Boris"}, lines=(
                ("S1", "The marketing budget for the quarter is two hundred thousand."),
                ("S2", "Half of it goes to the trade show in Berlin."),
                ("S1", "Travel costs were lower than planned, about seventeen thousand."),
                ("S2", "Software licenses renew in April and cost thirty one thousand."),
                ("S1", "The accountant asked for the invoices by the end of the week."),
                ("S2", "I'll approve the remaining expenses tomorrow."),
            )),
    Meeting(key="R1", day="2026-01-14", title="Совещание с поставщиками",
            speakers={"S1": "Ирина", "S2": "Олег"}, lines=(
                ("S1", "Коллеги, начнём обсуждение поставщиков."),
                ("S2", "Поставщик бумаги поднял цены на восемь процентов."),
                ("S1", "Надо согласовать новый договор до конца месяца."),
                ("S2", "Московский склад примет первую партию пятнадцатого февраля."),
                ("S1", "Оплату проведёт бухгалтерия после подписания акта."),
                ("S2", "Скидка за объём составит три процента."),
                ("S1", "Ответственным за поставки назначаем Олега."),
            )),
    Meeting(key="R2", day="2026-01-22", title="Планёрка отдела продаж",
            speakers={"S1": "Мария", "S2": "Сергей"}, lines=(
                ("S1", "Продажи в январе выросли на двадцать процентов."),
                ("S2", "Лучший результат показал новосибирский филиал."),
                ("S1", "Нужно нанять ещё двух менеджеров до весны."),
                ("S2", "Клиент Альфа просит отсрочку платежа на шестьдесят дней."),
                ("S1", "Отсрочку даём только на тридцать дней."),
                ("S2", "Презентацию для клиента подготовлю к среде."),
            )),
    Meeting(key="R3", day="2026-02-11", title="Ремонт офиса",
            speakers={"S1": "Павел", "S2": "Ольга"}, lines=(
                ("S1", "Ремонт в переговорной начнётся в понедельник."),
                ("S2", "Подрядчик оценил работы в четыреста тысяч рублей."),
                ("S1", "На время ремонта встречи переносим на третий этаж."),
                ("S2", "Новую мебель привезут через две недели."),
                ("S1", "Кондиционер заменим летом, сейчас нет бюджета."),
            )),
    Meeting(key="R4", day="2026-02-18", title="Отчётность",
            speakers={"S1": "Ирина", "S2": "Олег"}, lines=(
                ("S1", "Годовой отчёт нужно сдать в налоговую до двадцать пятого марта."),
                ("S2", "Бухгалтерия ещё не закрыла декабрь."),
                ("S1", "Аудитор приедет в первую неделю апреля."),
                ("S2", "Премии сотрудникам выплатим после утверждения отчёта."),
                ("S1", "Квартальный бюджет урезали на десять процентов."),
            )),
)

# Meetings that share the others' words (supplier, prices, budget, office, поставщик,
# бюджет, отчёт) without answering their questions: the ranking must tell them apart.
DISTRACTORS: tuple[Meeting, ...] = (
    Meeting(key="E5", day="2026-02-03", title="Supplier follow-up",
            speakers={"S1": "Clara", "S2": "Henry"}, lines=(
                ("S1", "The supplier sent new prices for the office chairs."),
                ("S2", "Our budget review is next quarter, not now."),
                ("S1", "Legal still has questions about the paperwork."),
                ("S2", "Let's ask the team about the travel plan later."),
                ("S1", "The marketing team wants a new design for the launch."),
            )),
    Meeting(key="R5", day="2026-02-04", title="Бюджет отдела",
            speakers={"S1": "Мария", "S2": "Павел"}, lines=(
                ("S1", "Бюджет отдела на квартал пока не утверждён."),
                ("S2", "Поставщик мебели ждёт ответа по договору."),
                ("S1", "Отчёт по продажам покажем клиенту в пятницу."),
                ("S2", "Премии обсудим после совещания с директором."),
                ("S1", "Ремонт склада отложили до лета."),
            )),
)

QUESTIONS: tuple[Asked, ...] = (
    Asked(question="How much did the packaging supplier raise prices?", meeting="E1", line=1),
    Asked(question="Which company offered delivery within four days?", meeting="E1", line=3),
    Asked(question="When does the supplier contract end?", meeting="E1", line=4),
    Asked(question="What did we decide about the supplier last month?", meeting="E1", line=5),
    Asked(question="Who sends the paperwork to legal?", meeting="E1", line=6),
    Asked(question="How many engineers do we have budget for?", meeting="E2", line=1),
    Asked(question="When should the designer start?", meeting="E2", line=2),
    Asked(question="Which days are the interviews?", meeting="E2", line=3),
    Asked(question="What is the salary range for engineers?", meeting="E2", line=5),
    Asked(question="How much does the recruiting agency charge?", meeting="E2", line=6),
    Asked(question="When does the lease of the old office expire?", meeting="E3", line=0),
    Asked(question="How many people fit in the office on Baker Street?", meeting="E3", line=1),
    Asked(question="What is the rent of the new office?", meeting="E3", line=2),
    Asked(question="When will they install the fiber?", meeting="E3", line=4),
    Asked(question="What about parking?", meeting="E3", line=5),
    Asked(question="What was the marketing budget this week?", meeting="E4", line=0),
    Asked(question="How much do the software licenses cost?", meeting="E4", line=3),
    Asked(question="What did the accountant ask for?", meeting="E4", line=4),
    Asked(question="What did Boris say about the trade show?", meeting="E4", line=1),
    Asked(question="How high were the travel costs?", meeting="E4", line=2),
    Asked(question="На сколько поставщик поднял цены на бумагу?", meeting="R1", line=1),
    Asked(question="До какого срока согласовать договор?", meeting="R1", line=2),
    Asked(question="Когда московский склад примет партию?", meeting="R1", line=3),
    Asked(question="Кто проводит оплату?", meeting="R1", line=4),
    Asked(question="Какая скидка за объём?", meeting="R1", line=5),
    Asked(question="Кто ответственный за поставки?", meeting="R1", line=6),
    Asked(question="На сколько выросли продажи в январе?", meeting="R2", line=0),
    Asked(question="Какой филиал показал лучший результат?", meeting="R2", line=1),
    Asked(question="Сколько менеджеров нужно нанять?", meeting="R2", line=2),
    Asked(question="Какую отсрочку просит клиент Альфа?", meeting="R2", line=3),
    Asked(question="Во сколько подрядчик оценил ремонт?", meeting="R3", line=1),
    Asked(question="Когда привезут новую мебель?", meeting="R3", line=3),
    Asked(question="Что с кондиционером?", meeting="R3", line=4),
    Asked(question="Когда сдать годовой отчёт?", meeting="R4", line=0),
    Asked(question="Что сказал Олег про бухгалтерию?", meeting="R4", line=1),
    Asked(question="Когда приедет аудитор?", meeting="R4", line=2),
    Asked(question="Когда выплатят премии?", meeting="R4", line=3),
    Asked(question="На сколько урезали бюджет на этой неделе?", meeting="R4", line=4),
    Asked(question="Какие цены у поставщика бумаги в прошлом месяце?", meeting="R1", line=1),
    Asked(question="поставщ бухгалт", meeting="R1", line=4),
)


def seconds_from(start: datetime, day: str) -> float:
    """Seconds from the clock's `start` to noon of `day` (UTC)."""
    moment = datetime.fromisoformat(f"{day}T12:00:00+00:00")
    return (moment - start) / timedelta(seconds=1)
