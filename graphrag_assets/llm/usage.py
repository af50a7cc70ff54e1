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
    causes: dict[str, int] = field(default_factory=dict)  # why calls failed (errors.cause_of) -> calls

    def failed(self, cause: str) -> None:
        """One call failed (after its retries) for ``cause``."""
        self.failures += 1
        self.causes[cause] = self.causes.get(cause, 0) + 1


@dataclass
class UsageByStage:
    stages: dict[str, StageUsage] = field(default_factory=dict)

    def stage(self, name: str) -> StageUsage:
        return self.stages.setdefault(name, StageUsage())

    @property
    def calls(self) -> int:
        """Calls made: answered, or failed after their retries (cache hits are no calls)."""
        return sum(s.calls + s.failures for s in self.stages.values())

    def causes(self) -> dict[str, int]:
        """Failed calls by cause, over the stages."""
        total: dict[str, int] = {}
        for stage in self.stages.values():
            for cause, count in stage.causes.items():
                total[cause] = total.get(cause, 0) + count
        return total

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
            "llm_failure_causes": self.causes(),
            "prompt_tokens": sum(s.prompt_tokens for s in self.stages.values()),
            "completion_tokens": sum(s.completion_tokens for s in self.stages.values()),
            "estimated_cost_usd": self.cost(),
            "llm_by_stage": {name: vars(stage) for name, stage in self.stages.items()},
        }
