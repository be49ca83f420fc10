"""`transcribed → done`: the transcript is final; the sender gets the reply.

The reply goes out through the engine's delivery helper *after* the advance
lands (`ReplyWithTranscript`), so a step that lost its claim replies to no
one and an undelivered reply never fails the step (P6). HTTP records get
nothing.
"""

from __future__ import annotations

from transcriber.errors import PermanentFailure
from transcriber.followups.after import ReplyWithTranscript
from transcriber.pipeline.step import Advanced, Job, Outcome
from transcriber.pipeline.steps._common import load_record


class FinishStep:
    name = "finish"

    def time_limit_seconds(self, job: Job) -> float | None:
        return None

    async def run(self, job: Job) -> Outcome:
        record = await load_record(job)
        if record.source == "telegram":
            return Advanced(effects=(ReplyWithTranscript(),))
        if record.source != "http":
            raise PermanentFailure("the record has an unknown source")
        return Advanced()
