"""Global search: map-reduce over community reports.

Reports of a level are shuffled into batches that fit the map budget; each batch yields
points with a 0-100 importance score (offline: the deterministic relevance function; with
an LLM: the model's JSON); points scoring 0 are dropped, the rest sorted by score and
packed into the reduce budget. When no report sentence answers but reports were
selected as relevant (a detail the reports summarise away: "Whose name does Scrooge read
on the grave?"), the answer is written from the text units behind those reports instead.
With nothing relevant the answer is a fixed "no data" sentence, never an invented one.

Dynamic community selection rates reports from the root level down and only expands the
children of relevant ones, so a narrow question reads a fraction of the reports.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass

import polars as pl

from graphrag_common.sentences import reading_sentences
from graphrag_common.tokens import count_tokens

from .context import citations_for, pack
from .extractive import _clean, compose, source_evidence
from .modes import ModeSearch
from .ranking import GraphRanking, rank_by_graph
from .reader import IndexReader
from .relevance import RelevanceScorer, terms
from .result import EXTRACTIVE_LABEL, NO_DATA_ANSWER, RESPONSE_TYPE, PreparedSearch, SearchResult, Usage
from .writer import Writer, Written


@dataclass(frozen=True)
class GlobalSettings:
    community_level: int = 2
    map_budget: int = 12_000  # tokens of report context per map batch
    reduce_budget: int = 12_000  # tokens of points in the reduce context
    dynamic: bool = False
    dynamic_threshold: int = 1  # a report rated at least this (0-5) is relevant
    dynamic_max_level: int = 2
    keep_parent: bool = False
    shuffle_seed: int = 86
    max_answer_points: int = 8
    # Share of the reduce budget kept for source text (the text units behind the reports
    # that made the points): reports summarise, the answer should still read the evidence.
    evidence_share: float = 0.5
    response_type: str = RESPONSE_TYPE
    allow_general_knowledge: bool = False


def reports_at_level(reports: pl.DataFrame, level: int) -> pl.DataFrame:
    """Reports of ``level``, plus leaf communities of shallower levels, so that every
    clustered entity is covered exactly once."""
    return reports.filter(
        (pl.col("level") == level) | ((pl.col("level") < level) & (pl.col("children").list.len() == 0))
    )


def offline_ratings(question: str, scorer: RelevanceScorer, reader: IndexReader, walk: GraphRanking):
    """Rates reports 0-5, the scale graphrag's rating prompt uses, without a model: for a
    corpus-wide question by the report's own importance (rank 0-10); otherwise the higher
    of two ratings, each in fifths of the best report's score:
    - lexical: the report's BM25 score, so that a report sharing the question's words counts
      (requiring most of them, as the relevance function does, kept 1-3 reports);
    - graph: the walk local search makes from the question's names, summed over the
      community's members, so that the community of a multi-hop question's second hop
      counts although its report shares few words with the question.
    On 2Wiki, lexical ratings alone put 59 % of the gold passages in the 4k context, both
    82 % (bench/README.md)."""
    if scorer.generic:
        return lambda rows: [min(5, math.ceil(row["rank"] / 2)) for row in rows]
    search = reader.report_search
    lexical = _fifths(dict(zip(search.ids, search.bm25.scores(question))))
    graph = reader.mention_graph
    position = {key: n for n, key in enumerate(graph.name_keys)}
    entities = reader.table("entities")
    entity_score = {
        e: float(walk.name_scores[position[k]]) for e, k in zip(entities["id"], entities["name_key"]) if k in position
    }
    communities = reader.table("communities")
    walked = _fifths(
        {
            c: sum(entity_score.get(e, 0.0) for e in members)
            for c, members in zip(communities["community"], communities["entity_ids"])
        }
    )
    return lambda rows: [max(lexical.get(row["id"], 0), walked.get(row["community"], 0)) for row in rows]


def _fifths(scores: dict) -> dict:
    """Each score as 0-5 fifths of the best one (0 when nothing scores)."""
    best = max(scores.values(), default=0.0)
    return {key: round(5 * value / best) for key, value in scores.items()} if best > 0 else {}


def select_dynamically(
    reports: pl.DataFrame, settings: GlobalSettings, rate_level
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(selected reports, every rating made) walking the hierarchy from the root level.
    ``rate_level`` rates a list of reports at once (the LLM, or ``offline_ratings``)."""
    by_community = {row["community"]: row for row in reports.iter_rows(named=True)}
    queue = [row["community"] for row in reports.iter_rows(named=True) if row["level"] == 0]
    selected, ratings = [], []
    while queue:
        following = []
        values = rate_level([by_community[c] for c in queue])
        for community, value in zip(queue, values):
            report = by_community[community]
            ratings.append({"community": community, "level": report["level"], "rating": value})
            if value < settings.dynamic_threshold:
                continue
            children = (
                [c for c in report["children"] if c in by_community]
                if report["level"] < settings.dynamic_max_level
                else []
            )
            if children:
                following.extend(children)
            if not children or settings.keep_parent:
                selected.append(community)
        queue = following
    chosen = reports.filter(pl.col("community").is_in(selected))
    return chosen, pl.DataFrame(ratings, schema={"community": pl.Int64, "level": pl.Int64, "rating": pl.Int64})


EVIDENCE_SCHEMA = {
    "id": pl.String,
    "human_readable_id": pl.Int64,
    "document_id": pl.String,
    "rank": pl.UInt32,
    "text": pl.String,
}


def evidence_units(walk: GraphRanking, reader: IndexReader, communities: list[int]) -> pl.DataFrame:
    """The text units behind the given communities (those their entities come from),
    most relevant to the question first (the ranking local search uses)."""
    members = (
        reader.table("communities")
        .filter(pl.col("community").is_in(communities))["entity_ids"]
        .explode()
        .drop_nulls()
        .unique()
    )
    behind = (
        reader.table("entities")
        .filter(pl.col("id").is_in(members.implode()))["text_unit_ids"]
        .explode()
        .drop_nulls()
        .unique()
    )
    return (
        walk.units.filter(pl.col("id").is_in(behind.implode()))
        .with_row_index("rank", offset=1)
        .join(reader.table("text_units"), on="id")
        .sort("rank")
        .select(list(EVIDENCE_SCHEMA))
    )


def _report_row(row: dict) -> str:
    return "|".join([str(row["community"]), row["title"], str(row["rank"]), row["full_content"].replace("\n", " ")])


def map_batches(
    reports: pl.DataFrame, settings: GlobalSettings, row_tokens: dict[int, int] | None = None
) -> list[tuple[pl.DataFrame, str, int]]:
    """Shuffled reports packed into batches of at most ``map_budget`` tokens each;
    ``row_tokens`` (community -> tokens of its row, ``report_row_tokens``) spares counting
    them again for every question."""
    order = list(range(reports.height))
    random.Random(settings.shuffle_seed).shuffle(order)
    remaining = reports[order] if order else reports
    header = "id|title|rank|content"
    cost = (lambda row: row_tokens[row["community"]]) if row_tokens is not None else None
    batches = []
    while remaining.height:
        kept, text, tokens = pack(remaining, _report_row, settings.map_budget, header, cost)
        if kept.is_empty():  # a single report larger than the budget: skip it, never overflow
            remaining = remaining[1:]
            continue
        batches.append((kept, text, tokens))
        remaining = remaining[kept.height :]
    return batches


def report_row_tokens(reader: IndexReader) -> dict[int, int]:
    """Tokens of each report's map row (with its line break), counted once per reader."""
    return reader.memo(
        "report_row_tokens",
        lambda: {
            row["community"]: count_tokens(_report_row(row) + "\n")
            for row in reader.table("community_reports").iter_rows(named=True)
        },
    )


def report_sentences(reader: IndexReader) -> dict[int, list[tuple[str, frozenset[str]]]]:
    """Each report's distinct evidence sentences (summary, then findings) with their
    terms, split and tokenized once per reader: the offline map scores them for every
    question."""

    def split() -> dict[int, list[tuple[str, frozenset[str]]]]:
        found = {}
        for report in reader.table("community_reports").iter_rows(named=True):
            statements = [report["summary"]] + [f["explanation"] for f in report["findings"] or []]
            sentences = [s.strip() for statement in statements for s in reading_sentences(_clean(statement))]
            found[report["community"]] = [(s, frozenset(terms(s))) for s in dict.fromkeys(sentences) if len(s) >= 20]
        return found

    return reader.memo("report_sentences", split)


GENERIC_POINTS_PER_REPORT = 3


def offline_map(
    scorer: RelevanceScorer,
    batch: pl.DataFrame,
    batch_number: int,
    sentences: dict[int, list[tuple[str, frozenset[str]]]],
    by_importance: bool = False,
) -> list[dict]:
    """Points of one batch: each distinct evidence sentence of its reports (``sentences``,
    from ``report_sentences``), scored 0-100 by relevance; for a corpus-wide question (or
    ``by_importance``), each report's leading findings scored by the report's rank."""
    points, seen = [], set()
    for report in batch.iter_rows(named=True):
        if scorer.generic or by_importance:
            score = round(report["rank"] * 10)
            for finding in (report["findings"] or [])[:GENERIC_POINTS_PER_REPORT]:
                sentence = reading_sentences(_clean(finding["explanation"]))[0].strip()
                if score > 0 and sentence not in seen:
                    seen.add(sentence)
                    points.append(
                        {
                            "batch": batch_number,
                            "community": report["community"],
                            "score": score,
                            "description": f"{finding['summary']}: {sentence}",
                        }
                    )
            continue
        for sentence, present in sentences.get(report["community"], []):
            if sentence in seen:
                continue
            seen.add(sentence)
            score = scorer.score_terms(present)
            if score > 0:
                points.append(
                    {"batch": batch_number, "community": report["community"], "score": score, "description": sentence}
                )
    return points


def extractive_points(
    question: str, scorer: RelevanceScorer, reader: IndexReader, batches: list[tuple[pl.DataFrame, str, int]]
) -> list[dict]:
    """The map without a model: ``offline_map`` over each batch."""
    # A report sharing no term with the question yields no point (every sentence would
    # score 0): skip it, unless the question is about the whole corpus.
    search = reader.report_search
    sharing = [i for i, score in zip(search.ids, search.bm25.scores(question)) if score > 0]
    points: list[dict] = []
    for number, (batch, _, _) in enumerate(batches, start=1):
        mapped = batch if scorer.generic else batch.filter(pl.col("id").is_in(sharing))
        points.extend(offline_map(scorer, mapped, number, report_sentences(reader)))
    if not points and scorer.asks_overview:
        # An overview whose other words no report sentence answers ("the top themes in
        # this tale"): the reports' own leading findings, by importance, rather than a
        # refusal; the answer says which words no report contains.
        for number, (batch, _, _) in enumerate(batches, start=1):
            points.extend(offline_map(scorer, batch, number, {}, by_importance=True))
    return points


SOURCES_LEAD = (
    "No sentence of the community reports covers the question; the passages behind the reports most related to it say:"
)


def extractive_answer(
    question: str, reader: IndexReader, scorer: RelevanceScorer, reduced: ReduceContext, settings: GlobalSettings
) -> str:
    """The best points quoted, each with its report; without points, the best sentences
    of the sources behind the selected reports (refused only when none covers the question)."""
    kept = reduced.points
    if kept.is_empty():
        return compose(
            question,
            source_evidence(reduced.sources, reader.passage_before),
            lead=SOURCES_LEAD,
            graph=reader.mention_graph,
        )
    lines = [EXTRACTIVE_LABEL]
    # Said, not hidden: the points answer the rest of the question, not these words.
    unmatched = [t for t, n in reader.report_search.bm25.document_frequencies(scorer.question_terms).items() if n == 0]
    if unmatched:
        lines.append("No community report contains: " + ", ".join(f'"{t}"' for t in unmatched) + ".")
    for point in kept.head(settings.max_answer_points).iter_rows(named=True):
        lines.append(f"- {point['description']} [Data: Reports ({point['community']})]")
    return "\n".join(lines)


POINTS_SCHEMA = {"batch": pl.Int64, "community": pl.Int64, "score": pl.Int64, "description": pl.String}


@dataclass(frozen=True)
class ReduceContext:
    """What the answer is written from: the points kept, the source text behind them."""

    points: pl.DataFrame
    sources: pl.DataFrame
    text: str
    tokens: int


def reduce_context(
    points: list[dict], reports: pl.DataFrame, walk, reader: IndexReader, settings: GlobalSettings
) -> ReduceContext:
    """The best distinct points in their share of the reduce budget, then the text units
    behind the reports that made them (all mapped reports when a point names none) in
    the rest; without points, the text units behind every selected report fill it all."""
    ranked = (
        pl.DataFrame(points, schema=POINTS_SCHEMA)
        .sort(["score", "batch", "community"], descending=[True, False, False])
        .unique("description", keep="first", maintain_order=True)
    )
    kept, points_text, points_tokens = pack(
        ranked,
        lambda p: f"Importance Score: {p['score']}\n{p['description']}",
        int(settings.reduce_budget * (1 - settings.evidence_share)),
        "----Analyst points----",
    )
    cited = kept["community"].drop_nulls().unique().to_list() or reports["community"].to_list()
    sources, sources_text, sources_tokens = pack(
        evidence_units(walk(), reader, cited) if cited else pl.DataFrame(schema=EVIDENCE_SCHEMA),
        lambda u: f"{u['human_readable_id']}|{u['text']}".replace("\n", " "),
        settings.reduce_budget - points_tokens,
        "----Sources----\nid|text",
    )
    text = "\n\n".join(text for text in (points_text, sources_text) if text)
    return ReduceContext(kept, sources, text, points_tokens + sources_tokens)


def reduce_values(question: str, reduced: ReduceContext, settings: GlobalSettings) -> dict:
    """The values of the ``global_reduce`` prompt."""
    return {
        "question": question,
        "context": reduced.text,
        "response_type": settings.response_type,
        "general_knowledge": "Do not add knowledge from outside the points."
        if not settings.allow_general_knowledge
        else "You may add general knowledge, marked as such.",
    }


def prepare_global(question: str, reader: IndexReader, settings: GlobalSettings, writer: Writer) -> PreparedSearch:
    """The map steps (and, with dynamic selection, the ratings) by ``writer``; the reduce
    is left to the ``PreparedSearch``."""
    started = time.perf_counter()
    all_reports = reader.table("community_reports")
    scorer = RelevanceScorer.over(question, reader.report_search)
    walks: list[GraphRanking] = []  # the walk from the question: made once, if a step needs it

    def walk() -> GraphRanking:
        if not walks:
            walks.append(rank_by_graph(question, reader))
        return walks[0]

    level_reports = reports_at_level(all_reports, settings.community_level)
    details: dict = {"reports_at_level": level_reports.height}
    if settings.dynamic:
        rate_level = writer.report_ratings(question, lambda: offline_ratings(question, scorer, reader, walk()))
        reports, ratings = select_dynamically(all_reports, settings, rate_level)
        details |= {"reports_rated": ratings.height, "reports_selected": reports.height}
    else:
        reports, ratings = level_reports, None
    batches = map_batches(reports, settings, report_row_tokens(reader))
    points = writer.map_points(question, batches, lambda: extractive_points(question, scorer, reader, batches))
    reduced = reduce_context(points, reports, walk, reader, settings)
    kept = reduced.points
    # Distinct reports any step read: with dynamic selection the rated ones (the mapped
    # ones are among them), otherwise those mapped.
    details |= {"map_batches": len(batches), "reports_read": ratings.height if ratings is not None else reports.height}
    written = (
        Written(NO_DATA_ANSWER, "extractive")
        if kept.is_empty() and reduced.sources.is_empty()
        else writer.answer(
            "global_reduce",
            reduce_values(question, reduced, settings),
            lambda: extractive_answer(question, reader, scorer, reduced, settings),
        )
    )
    context_reports = reports.select("community", "level", "title", "rank", "summary").with_columns(
        pl.col("community").is_in(kept["community"].drop_nulls().implode()).alias("cited")
    )
    context = {"reports": context_reports, "points": kept, "sources": reduced.sources}
    if ratings is not None:
        context["ratings"] = ratings
    result = SearchResult(
        question=question,
        method="global",
        answer=written.answer,
        context=context,
        usage=Usage(context_tokens=sum(t for _, _, t in batches) + reduced.tokens),
        generated_by=written.generated_by,
        citations=citations_for(reduced.sources["id"].to_list(), reader.table("text_units"), reader.table("documents")),
        details=details
        | {
            "map_batch_tokens": [t for _, _, t in batches],
            "reduce_tokens": reduced.tokens,
            "reduce_context": reduced.text,
        },
    )
    return PreparedSearch(result, started, writer.llm, written.prompt, written.values)


MODE = ModeSearch(GlobalSettings, prepare_global, budget="reduce_budget")
