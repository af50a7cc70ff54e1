"""The model writes: map points, report ratings and DRIFT steps as structured answers of
their prompts, the final answer streamed from its prompt. Imported only when an LLM is
configured (``writer.choose_writer``)."""

from __future__ import annotations

from graphrag_assets.llm.settings import LLMSettings

from .call_log import QueryCallLog
from .llm import DriftStep, MapResult, QueryLLM, Rating
from .writer import DriftAnswer, Written


class ModelWriter:
    def __init__(self, llm: QueryLLM):
        self.llm = llm

    @classmethod
    def for_settings(cls, settings: LLMSettings, log: QueryCallLog) -> ModelWriter:
        return cls(QueryLLM(settings, log))

    def answer(self, prompt, values, extract):
        return Written("", self.llm.model, prompt, values)

    def report_ratings(self, question, extract):
        def rate_level(rows: list[dict]) -> list[int]:
            answers = self.llm.ask_many(
                "rate_community", Rating, [{"question": question, "report": r["full_content"]} for r in rows]
            )
            return [a.rating for a in answers]

        return rate_level

    def map_points(self, question, batches, extract):
        answers = self.llm.ask_many(
            "global_map", MapResult, [{"question": question, "context": text} for _, text, _ in batches]
        )
        return [
            {"batch": number, "community": None, "score": p.score, "description": p.description}
            for number, answer in enumerate(answers, start=1)
            for p in answer.points
            if p.score > 0
        ]

    def drift_primer(self, question, context, limit, extract):
        step = self.llm.ask(
            "drift_step", DriftStep, question=question, original=question, followups=limit, context=context
        )
        return _answered(step, step.follow_up_queries[:limit])

    def drift_steps(self, original, asked, contexts, limit, extract):
        steps = self.llm.ask_many(
            "drift_step",
            DriftStep,
            [
                {"question": question, "original": original, "followups": limit, "context": local.text}
                for question, local in zip(asked, contexts)
            ],
        )
        return [_answered(step, list(dict.fromkeys(step.follow_up_queries))) for step in steps]


def _answered(step: DriftStep, questions: list[str]) -> DriftAnswer:
    """A DRIFT step's answer with its follow-ups, each scored as the model scored the step."""
    return DriftAnswer(step.answer, [{"question": q, "score": step.score} for q in questions])
