"""DRIFT search: a primer over the most relevant reports gives an intermediate answer
and follow-up questions; each round answers the top-ranked open follow-ups with local
search, which yields answers and new follow-ups; the tree of answers is reduced into the
final answer (the one step left to the returned ``PreparedSearch``) and returned as context.

The primer reads the reports that best match the question (BM25 over reports, fused with
the dense ranking when the embedder is semantic). Offline, follow-ups ask about the
best-connected entities the answers surfaced, ranked by relevance to the question."""

from __future__ import annotations

import time
from dataclasses import dataclass

import polars as pl

from .context import citations_for, pack
from .extractive import Evidence, compose
from .local_mode import LocalSettings, build_local_context, prepare_local
from .ranking import report_ranking
from .reader import IndexReader
from .relevance import RelevanceScorer
from .result import PreparedSearch, SearchResult, Usage

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
    response_type: str = "multiple paragraphs"

    @property
    def local(self) -> LocalSettings:
        return LocalSettings(budget=self.budget)


def _followups(
    question: str, entity_ids: list[str], entities: pl.DataFrame, scorer: RelevanceScorer, asked: set[str], limit: int
) -> list[dict]:
    candidates = entities.filter(pl.col("id").is_in(entity_ids)).sort("degree", descending=True)
    found = []
    for entity in candidates.iter_rows(named=True):
        if entity["title"].casefold() in question.casefold() or entity["id"] in asked:
            continue
        asked.add(entity["id"])
        found.append(
            {
                "question": f"What role does {entity['title']} play with respect to: {question}",
                "score": scorer.score(f"{entity['title']} {entity['description']}"),
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


def prepare_drift(
    question: str, reader: IndexReader, settings: DriftSettings = DriftSettings(), llm=None
) -> PreparedSearch:
    started = time.perf_counter()
    reports = reader.table("community_reports")
    entities = reader.table("entities")
    communities = reader.table("communities")
    scorer = RelevanceScorer.over(question, reader.report_search)

    # Primer: the reports that best match the question (BM25, fused with vectors).
    ranked = pl.DataFrame(
        {"id": report_ranking(question, reader, settings.primer_reports)}, schema={"id": pl.String}
    ).with_row_index("rank")
    primer = ranked.join(
        reports.select(pl.col("id"), "community", "title", "summary", "findings", "full_content"), on="id"
    ).sort("rank")
    primer_evidence = [Evidence(r["full_content"], f"Reports ({r['community']})") for r in primer.iter_rows(named=True)]
    asked: set[str] = set()
    if llm is not None:
        from .llm import DriftStep

        context = "-----Reports-----\n" + "\n".join(
            f"{r['community']}|{r['title']}|{r['full_content']}".replace("\n", " ")
            for r in primer.iter_rows(named=True)
        )
        step = llm.ask(
            "drift_step",
            DriftStep,
            question=question,
            original=question,
            followups=settings.followups_per_round * 2,
            context=context,
        )
        intermediate = step.answer
        queue = [
            {"question": q, "score": step.score, "parent": 0}
            for q in step.follow_up_queries[: settings.followups_per_round * 2]
        ]
    else:
        intermediate = compose(question, primer_evidence, limit=4)
        primer_entities = (
            communities.filter(pl.col("community").is_in(primer["community"].implode()))["entity_ids"]
            .explode()
            .drop_nulls()
            .to_list()
        )
        queue = [
            f | {"parent": 0}
            for f in _followups(question, primer_entities, entities, scorer, asked, settings.followups_per_round * 2)
        ]
    nodes = [{"id": 0, "parent": None, "depth": 0, "question": question, "score": 100, "answer": intermediate}]

    sources: list[pl.DataFrame] = []
    evidence = list(primer_evidence)
    local_tokens = 0
    for depth in range(1, settings.depth + 1):
        queue.sort(key=lambda f: -f["score"])
        current, queue = queue[: settings.followups_per_round], queue[settings.followups_per_round :]
        if not current:
            break
        if llm is not None:
            from .llm import DriftStep

            built = [build_local_context(f["question"], reader, settings.local) for f in current]
            steps = llm.ask_many(
                "drift_step",
                DriftStep,
                [
                    {
                        "question": f["question"],
                        "original": question,
                        "followups": settings.followups_per_answer,
                        "context": b.text,
                    }
                    for f, b in zip(current, built)
                ],
            )
            for followup, local, step in zip(current, built, steps):
                local_tokens += local.tokens
                node_id = _add_node(nodes, followup, depth, step.answer)
                sources.append(local.sources.select(*SOURCE_COLUMNS))
                known = {n["question"] for n in nodes} | {f["question"] for f in queue}
                fresh = [q for q in dict.fromkeys(step.follow_up_queries) if q not in known]  # never ask twice
                queue.extend(
                    {"question": q, "score": step.score, "parent": node_id}
                    for q in fresh[: settings.followups_per_answer]
                )
            continue
        for followup in current:
            result = prepare_local(followup["question"], reader, settings.local).finish()
            local_tokens += result.usage.context_tokens
            node_id = _add_node(nodes, followup, depth, result.answer)
            sources.append(result.context["sources"].select(*SOURCE_COLUMNS))
            evidence += [
                Evidence(u["text"], f"Sources ({u['human_readable_id']})")
                for u in result.context["sources"].iter_rows(named=True)
            ]
            new = _followups(
                question,
                result.context["entities"]["id"].to_list(),
                entities,
                scorer,
                asked,
                settings.followups_per_answer,
            )
            queue.extend(f | {"parent": node_id} for f in new)

    prompt, values = None, {}
    if llm is not None:
        answers = "\n\n".join(f"Q: {n['question']}\nA: {n['answer']}" for n in nodes)
        prompt, values = (
            "drift_reduce",
            {"question": question, "context": answers, "response_type": settings.response_type},
        )
        answer, generated_by = "", llm.model
    else:
        answer, generated_by = compose(question, evidence, limit=8, graph=reader.mention_graph), "extractive"
    tree = pl.DataFrame(
        nodes,
        schema={
            "id": pl.Int64,
            "parent": pl.Int64,
            "depth": pl.Int64,
            "question": pl.String,
            "score": pl.Int64,
            "answer": pl.String,
        },
    )
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
        answer=answer,
        context={"tree": tree, "reports": primer.select("community", "title", "summary", "rank"), "sources": used},
        citations=citations_for(used["id"].to_list(), reader.table("text_units"), reader.table("documents")),
        usage=Usage(context_tokens=local_tokens),
        generated_by=generated_by,
        details={
            "open_followups": len(queue),
            "depth_reached": int(tree["depth"].max() or 0),
            "answer_context_tokens": used_tokens,
        },
    )
    return PreparedSearch(result, started, llm, prompt, values)
