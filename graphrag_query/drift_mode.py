"""DRIFT search: a primer over the most relevant reports gives an intermediate answer
and follow-up questions; each round answers the top-ranked open follow-ups with local
search, which yields answers and new follow-ups; the tree of answers is reduced into the
final answer (the one step left to the returned ``PreparedSearch``) and returned as context.

The primer reads the reports that best match the question (BM25 over reports, fused with
the dense ranking when the embedder is semantic). Offline, follow-ups ask about the
best-connected entities the answers surfaced, ranked by relevance to the question."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import polars as pl

from .context import citations_for, pack
from .extractive import Evidence, compose, source_evidence
from .local_mode import LocalContext, LocalSettings, build_local_context, extractive_answer
from .modes import ModeSearch
from .ranking import report_ranking
from .reader import IndexReader
from .relevance import RelevanceScorer
from .result import RESPONSE_TYPE, PreparedSearch, SearchResult, Usage
from .writer import DriftAnswer, Writer

SOURCE_SCHEMA = {
    "id": pl.String,
    "human_readable_id": pl.Int64,
    "document_id": pl.String,
    "rank": pl.UInt32,
    "text": pl.String,
}
SOURCE_COLUMNS = list(SOURCE_SCHEMA)


@dataclass(frozen=True)
class DriftSettings:
    primer_reports: int = 5
    depth: int = 3
    followups_per_round: int = 3
    followups_per_answer: int = 3
    budget: int = 8_000  # each follow-up's local context, and the sources the answer reads
    response_type: str = RESPONSE_TYPE

    @property
    def local(self) -> LocalSettings:
        return LocalSettings(budget=self.budget)


@dataclass
class FollowupFinder:
    """Follow-ups without a model: questions about the best-connected entities an answer
    surfaced that the question does not name, each entity asked about once."""

    question: str
    entities: pl.DataFrame
    scorer: RelevanceScorer
    asked: set[str] = field(default_factory=set)

    def about(self, entity_ids: list[str], limit: int) -> list[dict]:
        candidates = self.entities.filter(pl.col("id").is_in(entity_ids)).sort("degree", descending=True)
        found = []
        for entity in candidates.iter_rows(named=True):
            if entity["title"].casefold() in self.question.casefold() or entity["id"] in self.asked:
                continue
            self.asked.add(entity["id"])
            found.append(
                {
                    "question": f"What role does {entity['title']} play with respect to: {self.question}",
                    "score": self.scorer.score(f"{entity['title']} {entity['description']}"),
                    "entity_id": entity["id"],
                }
            )
            if len(found) == limit:
                break
        return found


def _add_node(nodes: list[dict], followup: dict, depth: int, answer: str) -> int:
    """Append the answered follow-up to the tree as a node; its id (its place in ``nodes``)
    is the parent of the follow-ups its answer raises."""
    node_id = len(nodes)
    nodes.append(
        {
            "id": node_id,
            "parent": followup["parent"],
            "depth": depth,
            "question": followup["question"],
            "score": followup["score"],
            "answer": answer,
        }
    )
    return node_id


def primer_reports(question: str, reader: IndexReader, settings: DriftSettings) -> pl.DataFrame:
    """The reports that best match the question (BM25, fused with vectors), best first;
    when none shares a word with it ("What are the top themes?" over a lexical index), the
    most important reports: a question about the whole starts from what matters most in
    it, never from nothing."""
    reports = reader.table("community_reports")
    matched = report_ranking(question, reader, settings.primer_reports)
    if not matched:
        matched = (
            reports.sort(["rank", "community"], descending=[True, False])["id"].head(settings.primer_reports).to_list()
        )
    ranked = pl.DataFrame({"id": matched}, schema={"id": pl.String}).with_row_index("rank")
    return ranked.join(reports.select("id", "community", "title", "summary", "findings", "full_content"), on="id").sort(
        "rank"
    )


def answer_primer(
    question: str, primer: pl.DataFrame, reader: IndexReader, settings: DriftSettings, writer: Writer, finder
) -> DriftAnswer:
    """The intermediate answer from the primer's reports and its follow-ups (without a
    model: the primer quoted, follow-ups about the best-connected entities of its
    communities)."""
    limit = settings.followups_per_round * 2
    context = "-----Reports-----\n" + "\n".join(
        f"{r['community']}|{r['title']}|{r['full_content']}".replace("\n", " ") for r in primer.iter_rows(named=True)
    )

    def extract() -> DriftAnswer:
        communities = reader.table("communities").filter(pl.col("community").is_in(primer["community"].implode()))
        members = communities["entity_ids"].explode().drop_nulls().to_list()
        reports = report_evidence(primer)
        return DriftAnswer(compose(question, reports, limit=4, overview=reports), finder.about(members, limit))

    return writer.drift_primer(question, context, limit, extract)


def report_evidence(primer: pl.DataFrame) -> list[Evidence]:
    return [Evidence(r["full_content"], f"Reports ({r['community']})") for r in primer.iter_rows(named=True)]


def answer_round(
    question: str, current: list[dict], reader: IndexReader, settings: DriftSettings, writer: Writer, finder
) -> list[tuple[LocalContext, DriftAnswer]]:
    """Each follow-up of the round with its local context and its answer (without a
    model: local search's extractive answer, follow-ups about the context's entities)."""
    asked = [f["question"] for f in current]
    built = [build_local_context(q, reader, settings.local) for q in asked]

    def extract() -> list[DriftAnswer]:
        return [
            DriftAnswer(
                extractive_answer(q, local, reader),
                finder.about(local.entities["id"].to_list(), settings.followups_per_answer),
            )
            for q, local in zip(asked, built)
        ]

    return list(zip(built, writer.drift_steps(question, asked, built, settings.followups_per_answer, extract)))


TREE_SCHEMA = {
    "id": pl.Int64,
    "parent": pl.Int64,
    "depth": pl.Int64,
    "question": pl.String,
    "score": pl.Int64,
    "answer": pl.String,
}


def prepare_drift(question: str, reader: IndexReader, settings: DriftSettings, writer: Writer) -> PreparedSearch:
    started = time.perf_counter()
    finder = FollowupFinder(question, reader.table("entities"), RelevanceScorer.over(question, reader.report_search))
    primer = primer_reports(question, reader, settings)
    first = answer_primer(question, primer, reader, settings, writer, finder)
    queue = [f | {"parent": 0} for f in first.followups]
    nodes = [{"id": 0, "parent": None, "depth": 0, "question": question, "score": 100, "answer": first.answer}]
    sources: list[pl.DataFrame] = []
    evidence = report_evidence(primer)
    local_tokens = 0
    for depth in range(1, settings.depth + 1):
        queue.sort(key=lambda f: -f["score"])
        current, queue = queue[: settings.followups_per_round], queue[settings.followups_per_round :]
        if not current:
            break
        for followup, (local, step) in zip(current, answer_round(question, current, reader, settings, writer, finder)):
            local_tokens += local.tokens
            node_id = _add_node(nodes, followup, depth, step.answer)
            sources.append(local.sources.select(*SOURCE_COLUMNS))
            evidence += source_evidence(local.sources, reader.passage_before)
            known = {n["question"] for n in nodes} | {f["question"] for f in queue}
            fresh = [f for f in step.followups if f["question"] not in known]  # never ask twice
            queue.extend(f | {"parent": node_id} for f in fresh[: settings.followups_per_answer])
    answers = "\n\n".join(f"Q: {n['question']}\nA: {n['answer']}" for n in nodes)
    written = writer.answer(
        "drift_reduce",
        {"question": question, "context": answers, "response_type": settings.response_type},
        lambda: compose(question, evidence, limit=8, graph=reader.mention_graph, overview=report_evidence(primer)),
    )
    tree = pl.DataFrame(nodes, schema=TREE_SCHEMA)
    # The answer reads every step's best sources first (each step's rank 1, then rank 2...).
    found = pl.concat(sources).sort("rank", maintain_order=True).unique("id", maintain_order=True) if sources else None
    used, _, used_tokens = pack(
        found if found is not None else pl.DataFrame(schema=SOURCE_SCHEMA),
        lambda u: f"{u['human_readable_id']}|{u['text']}".replace("\n", " "),
        settings.budget,
        "id|text",
    )
    result = SearchResult(
        question=question,
        method="drift",
        answer=written.answer,
        context={"tree": tree, "reports": primer.select("community", "title", "summary", "rank"), "sources": used},
        citations=citations_for(used["id"].to_list(), reader.table("text_units"), reader.table("documents")),
        usage=Usage(context_tokens=local_tokens),
        generated_by=written.generated_by,
        details={
            "open_followups": len(queue),
            "depth_reached": int(tree["depth"].max() or 0),
            "answer_context_tokens": used_tokens,
        },
    )
    return PreparedSearch(result, started, writer.llm, written.prompt, written.values)


MODE = ModeSearch(DriftSettings, prepare_drift)
