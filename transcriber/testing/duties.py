"""Fake duty locks (`ports.DutyLocks`): one keeper stands for the lock's home (a data
folder, a PostgreSQL database) shared by the fake processes of a test.

As the real ones: a lock is taken only when nobody holds it, never waited for; a
holder keeps it until it gives it back or the test cuts it (`cut`: a dropped
connection, whose `lost` then returns and whose lock is free again). `asks` counts
every `try_take` per duty.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field

from transcriber.ports import Duty


@dataclass
class FakeDutyKeeper:
    holders: dict[Duty, FakeDutyLock] = field(default_factory=dict)
    asks: Counter[Duty] = field(default_factory=Counter)

    def locks(self) -> FakeDutyLocks:
        """The locks of one more process."""
        return FakeDutyLocks(self)

    def cut(self, duty: Duty) -> None:
        """The holder of `duty` loses it (its connection dropped)."""
        holder = self.holders.pop(duty, None)
        if holder is not None:
            holder.lost_event.set()


class FakeDutyLocks:
    def __init__(self, keeper: FakeDutyKeeper) -> None:
        self._keeper = keeper
        self.made: list[FakeDutyLock] = []

    def lock(self, duty: Duty) -> FakeDutyLock:
        made = FakeDutyLock(self._keeper, duty)
        self.made.append(made)
        return made

    async def close(self) -> None:
        for made in self.made:
            await made.give_back()


class FakeDutyLock:
    def __init__(self, keeper: FakeDutyKeeper, duty: Duty) -> None:
        self._keeper = keeper
        self._duty = duty
        self.lost_event = asyncio.Event()

    @property
    def duty(self) -> Duty:
        return self._duty

    @property
    def held(self) -> bool:
        return self._keeper.holders.get(self._duty) is self

    async def try_take(self) -> bool:
        self._keeper.asks[self._duty] += 1
        if self._duty not in self._keeper.holders:
            self._keeper.holders[self._duty] = self
            self.lost_event = asyncio.Event()
        return self.held

    async def lost(self) -> None:
        await self.lost_event.wait()

    async def give_back(self) -> None:
        if self.held:
            del self._keeper.holders[self._duty]
