"""Requests-per-minute and tokens-per-minute limits that wait with ``asyncio.sleep``:
a throttled call never blocks the event loop, the other calls keep going."""

from __future__ import annotations

import asyncio
import time


class TokenBucket:
    def __init__(self, per_minute: int):
        self.capacity = float(per_minute)
        self.level = float(per_minute)
        self.rate = per_minute / 60.0
        self.updated = time.monotonic()
        self.lock = asyncio.Lock()

    async def take(self, amount: float) -> None:
        if self.capacity <= 0:
            return
        amount = min(amount, self.capacity)  # one oversize request waits for a full bucket, not forever
        async with self.lock:
            while True:
                now = time.monotonic()
                self.level = min(self.capacity, self.level + (now - self.updated) * self.rate)
                self.updated = now
                if self.level >= amount:
                    self.level -= amount
                    return
                await asyncio.sleep((amount - self.level) / self.rate)


class RateLimiter:
    """GRAPHRAG_LLM_RPM and GRAPHRAG_LLM_TPM (0: unlimited)."""

    def __init__(self, rpm: int, tpm: int):
        self.requests = TokenBucket(rpm)
        self.tokens = TokenBucket(tpm)

    async def acquire(self, estimated_tokens: int) -> None:
        await self.requests.take(1)
        await self.tokens.take(estimated_tokens)
