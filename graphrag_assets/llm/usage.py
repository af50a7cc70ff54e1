"""Calls, cache hits, retries, failures, tokens and cost of one step, per stage: what a step
reports in its materialization metadata."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class StageUsage:
    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


@dataclass
class UsageByStage:
    stages: dict[str, StageUsage] = field(default_factory=dict)

    def stage(self, name: str) -> StageUsage:
        return self.stages.setdefault(name, StageUsage())

    @property
    def calls(self) -> int:
        return sum(s.calls for s in self.stages.values())

    @property
    def tokens(self) -> int:
        return sum(s.prompt_tokens + s.completion_tokens for s in self.stages.values())

    def cost(self) -> float:
        return round(sum(s.cost_usd for s in self.stages.values()), 6)

    def metadata(self) -> dict:
        return {
            "llm_calls": self.calls,
            "llm_cache_hits": sum(s.cache_hits for s in self.stages.values()),
            "llm_retries": sum(s.retries for s in self.stages.values()),
            "llm_failures": sum(s.failures for s in self.stages.values()),
            "prompt_tokens": sum(s.prompt_tokens for s in self.stages.values()),
            "completion_tokens": sum(s.completion_tokens for s in self.stages.values()),
            "estimated_cost_usd": self.cost(),
            "llm_by_stage": {name: vars(stage) for name, stage in self.stages.items()},
        }
