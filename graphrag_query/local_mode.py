"""Local search: the question's entities and their graph neighbourhood in one token
budget with configurable shares.

Text units are ranked by a walk over the graph of text units and the names they mention,
from the names the question contains and its best BM25 matches (``ranking``): the second
hop of a multi-hop question is reached through the name the first hop mentions. Seeds are
the entities the question names, then those the walk reached most. The context holds the
community reports of the seeds (ranked by how many seeds they hold, then rank), the seed
entities, their relationships (in-network first, then by links to the seeds and combined
degree), the claims about the seeds (when the index has claims: seed order, then subject
and type; at most a quarter of what the entities leave of their share, the rest going to
relationships), and the text units in walk order. The last turns of a conversation are
included and paid from the same budget."""

from __future__ import annotations

import time
from dataclasses import dataclass

import polars as pl

from graphrag_assets.core.claims import CLAIM_HEADER, CLAIM_ORDER, CLAIM_SHARE, claim_line
from graphrag_common.relationships import is_cooccurrence_description
from graphrag_common.tokens import count_tokens

from .context import citations_for, pack
from .extractive import Evidence, compose, source_evidence
from .modes import ModeSearch
from .ranking import GraphRanking, RankingSettings, rank_by_graph
from .reader import IndexReader
from .result import RESPONSE_TYPE, PreparedSearch, SearchResult, Usage
from .writer import Writer

Turn = tuple[str, str]  # (role, content)


@dataclass(frozen=True)
class LocalSettings:
    top_k_entities: int = 10
    oversample: int = 2  # candidates fetched per seed kept (exclusions and ties need slack)
    budget: int = 12_000
    # Source text is the evidence; offline, entity and relationship descriptions are quoted
    # sentences of the same text units. On 2Wiki (bench/README.md), gold passages in the
    # context at 2k / 4k tokens: 0.5 / 0.15 -> 89 % at 4k; 0.7 / 0.1 -> 83.5 / 95.6 %;
    # 0.9 / 0.05 -> 89.5 / 97.6 %, with as many offline answers right.
    text_unit_share: float = 0.9
    community_share: float = 0.05
    max_history_turns: int = 5
    # Reports enter the local context by summary: full reports rarely fit the community
    # share and repeat the entities and relationships the context already carries.
    community_text: str = "summary"
    response_type: str = RESPONSE_TYPE
    ranking: RankingSettings = RankingSettings()

    def __post_init__(self):
        if self.text_unit_share + self.community_share > 1:
            raise ValueError("text_unit_share + community_share must not exceed 1")


ENTITY_SHARE = 0.5  # of the entities+relationships budget
PASS_OVER_UNITS = 8  # text units too long for what is left of the budget, passed over for the next
ANSWER_PROMPT = "answer_from_context"  # the model's answer in local and basic search


def answer_values(question: str, context: str, response_type: str) -> dict:
    """The values of ``ANSWER_PROMPT`` for a question and its context text."""
    return {"question": question, "context": context, "history": "", "response_type": response_type}


def history_text(history: list[Turn] | None, max_turns: int) -> str:
    if not history:
        return ""
    recent = history[-2 * max_turns :]
    return "\n".join(f"{role}: {content}" for role, content in recent)


def seed_entities(
    question: str, reader: IndexReader, settings: LocalSettings, ranking: GraphRanking, exclude: list[str] | None = None
) -> pl.DataFrame:
    """Entities the question names (whole words, the most specific first), then those the
    walk from the question reached most, then the nearest by description embedding."""
    entities = reader.table("entities")
    if exclude:
        entities = entities.filter(~pl.col("id").is_in(exclude))
    named = sorted(ranking.question_names, key=lambda key: -ranking.question_names[key])
    # Most names the walk reaches are mentions the graph build pruned: look deep enough.
    walked = ranking.top_names(settings.top_k_entities * 20)
    by_key = reader.entity_by_name_key
    order = [by_key[key] for key in dict.fromkeys(named + [key for key, _ in walked]) if key in by_key]
    order = [e for e in order if not exclude or e not in exclude][: settings.top_k_entities]
    if len(order) < settings.top_k_entities:
        hits = reader.nearest(
            "entity_description", reader.embed(question), settings.top_k_entities * settings.oversample, exclude
        )
        order = list(dict.fromkeys(order + hits["id"].to_list()))[: settings.top_k_entities]
    score = {by_key[key]: value for key, value in walked if key in by_key}
    return (
        pl.DataFrame({"id": order}, schema={"id": pl.String})
        .with_row_index("seed_rank")
        .join(entities, on="id")
        .sort("seed_rank")
        .with_columns(pl.col("id").replace_strict(score, default=0.0, return_dtype=pl.Float64).alias("score"))
    )


@dataclass
class LocalContext:
    """What local search hands the model: the rows of each section, their text, and the
    tokens used. ``section_budgets`` are the shares' budgets (entities, relationships and
    claims share one); ``text`` is the whole context as the prompt receives it."""

    seeds: pl.DataFrame
    ranking: GraphRanking
    reports: pl.DataFrame
    entities: pl.DataFrame
    relationships: pl.DataFrame
    claims: pl.DataFrame
    sources: pl.DataFrame
    conversation: str
    texts: dict[str, str]  # section name -> its packed text, in prompt order
    section_budgets: dict[str, int]
    tokens: int

    @property
    def text(self) -> str:
        return "\n\n".join(f"-----{name.title()}-----\n{text}" for name, text in self.texts.items() if text)


Packed = tuple[pl.DataFrame, str, int]  # rows kept, their text, tokens used (``context.pack``)


def build_local_context(
    question: str,
    reader: IndexReader,
    settings: LocalSettings,
    history: list[Turn] | None = None,
    exclude: list[str] | None = None,
) -> LocalContext:
    conversation = history_text(history, settings.max_history_turns)
    conversation_tokens = count_tokens(conversation) if conversation else 0
    budget = max(settings.budget - conversation_tokens, 0)
    ranking = rank_by_graph(question, reader, settings.ranking)
    seeds = seed_entities(question, reader, settings, ranking, exclude)
    reports, report_text, report_tokens = _reports_holding(
        reader, seeds, int(budget * settings.community_share), settings.community_text
    )
    # Entities, their claims and their relationships share the local budget.
    local_budget = int(budget * (1 - settings.text_unit_share - settings.community_share))
    (entity_rows, entity_text, entity_tokens), claimed, related = _seeds_in_the_graph(reader, seeds, local_budget)
    claim_rows, claim_text, claim_tokens = claimed
    relationship_rows, relationship_text, relationship_tokens = related
    unit_rows, unit_text, unit_tokens = _sources_along_the_walk(reader, ranking, int(budget * settings.text_unit_share))
    return LocalContext(
        seeds=seeds,
        ranking=ranking,
        reports=reports,
        entities=entity_rows,
        relationships=relationship_rows,
        claims=claim_rows,
        sources=unit_rows,
        conversation=conversation,
        texts={
            "conversation": conversation,
            "reports": report_text,
            "entities": entity_text,
            "relationships": relationship_text,
            "claims": claim_text,
            "sources": unit_text,
        },
        section_budgets={
            "reports": int(budget * settings.community_share),
            "entities+relationships": local_budget,
            "sources": int(budget * settings.text_unit_share),
        },
        tokens=conversation_tokens + report_tokens + entity_tokens + relationship_tokens + claim_tokens + unit_tokens,
    )


def _reports_holding(reader: IndexReader, seeds: pl.DataFrame, budget: int, text_column: str) -> Packed:
    """The community reports holding the seeds, those holding the most first."""
    holding = (
        reader.table("communities")
        .select("community", "entity_ids")
        .explode("entity_ids")
        .filter(pl.col("entity_ids").is_in(seeds["id"].to_list()))
        .group_by("community")
        .agg(pl.len().alias("seeds_held"))
    )
    reports = (
        reader.table("community_reports")
        .join(holding, on="community")
        .sort(["seeds_held", "rank", "community"], descending=[True, True, False])
    )
    return pack(
        reports,
        lambda r: f"{r['community']}|{r['title']}|{r[text_column]}".replace("\n", " "),
        budget,
        "id|title|content",
    )


def _seeds_in_the_graph(reader: IndexReader, seeds: pl.DataFrame, budget: int) -> tuple[Packed, Packed, Packed]:
    """The seeds, their claims and their relationships, packed in that order into one
    budget: (entities, claims, relationships)."""
    # Entities take at most half: long descriptions must not crowd out the relationships,
    # which carry how the seeds connect.
    entities = pack(
        seeds,
        lambda e: f"{e['human_readable_id']}|{e['title']}|{e['description']}|{e['degree']}",
        int(budget * ENTITY_SHARE),
        "id|entity|description|number of relationships",
    )
    entity_rows, _, entity_tokens = entities
    claims = reader.claims.join(
        entity_rows.select(pl.col("id").alias("subject_entity_id"), "seed_rank"), on="subject_entity_id"
    ).sort(["seed_rank", *CLAIM_ORDER])
    claimed = pack(claims, claim_line, int((budget - entity_tokens) * CLAIM_SHARE), CLAIM_HEADER)
    related = pack(
        _relationships_of(reader, set(seeds["title"].to_list())),
        lambda r: f"{r['human_readable_id']}|{r['source']}|{r['target']}|{r['description']}|{r['weight']:.2f}",
        budget - entity_tokens - claimed[2],
        "id|source|target|description|weight",
    )
    return entities, claimed, related


def _relationships_of(reader: IndexReader, seed_titles: set[str]) -> pl.DataFrame:
    """The relationships with a seed at one end or both, those linking two seeds first, then
    the best connected and the strongest."""
    relationships = (
        reader.table("relationships")
        .with_columns(
            (
                pl.col("source").is_in(list(seed_titles)).cast(pl.Int64)
                + pl.col("target").is_in(list(seed_titles)).cast(pl.Int64)
            ).alias("seed_links")
        )
        .filter(pl.col("seed_links") > 0)
    )
    return relationships.sort(
        ["seed_links", "combined_degree", "weight", "human_readable_id"], descending=[True, True, True, False]
    )


def _sources_along_the_walk(reader: IndexReader, ranking: GraphRanking, budget: int) -> Packed:
    """Text units in the order of the walk from the question's names and best matches."""
    units = ranking.units.with_row_index("rank", offset=1).join(reader.table("text_units"), on="id").sort("rank")
    return pack(
        units,
        lambda u: f"{u['human_readable_id']}|{u['text']}".replace("\n", " "),
        budget,
        "id|text",
        pass_over=PASS_OVER_UNITS,
    )


def extractive_answer(question: str, built: LocalContext, reader: IndexReader) -> str:
    """The context's most relevant sentences quoted: source text, relationships the
    extraction described (not mere co-occurrence), claims; for a question about the whole,
    the reports in the context."""
    evidence = source_evidence(built.sources, reader.passage_before)
    evidence += [
        Evidence(r["description"], f"Relationships ({r['human_readable_id']})")
        for r in built.relationships.iter_rows(named=True)
        if not is_cooccurrence_description(r["description"])
    ]
    evidence += [
        Evidence(c["description"], f"Claims ({c['human_readable_id']})") for c in built.claims.iter_rows(named=True)
    ]
    seeds = built.seeds["title"].head(3).to_list()
    lead = f"Entities most related to the question: {', '.join(seeds)}." if seeds else ""
    overview = [Evidence(r["summary"], f"Reports ({r['community']})") for r in built.reports.iter_rows(named=True)]
    return compose(
        question,
        evidence,
        lead=lead,
        graph=reader.mention_graph,
        name_scores=built.ranking.name_scores,
        overview=overview,
    )


def prepare_local(
    question: str,
    reader: IndexReader,
    settings: LocalSettings,
    writer: Writer,
    history: list[Turn] | None = None,
    exclude_entities: list[str] | None = None,
) -> PreparedSearch:
    started = time.perf_counter()
    built = build_local_context(question, reader, settings, history, exclude_entities)
    written = writer.answer(
        ANSWER_PROMPT,
        answer_values(question, built.text, settings.response_type),
        lambda: extractive_answer(question, built, reader),
    )
    sources = built.sources
    context = {
        "entities": built.entities.select("id", "human_readable_id", "title", "type", "description", "degree", "score"),
        "relationships": built.relationships.select(
            "id", "human_readable_id", "source", "target", "description", "weight", "combined_degree"
        ),
        "reports": built.reports.select("community", "level", "title", "rank", "seeds_held"),
        "claims": built.claims.select(
            "id",
            "human_readable_id",
            pl.col("subject_id").alias("subject"),
            pl.col("object_id").alias("object"),
            "type",
            "status",
            "start_date",
            "end_date",
            "description",
            "source_text",
            "text_unit_id",
        ),
        "sources": sources.select("id", "human_readable_id", "document_id", "rank", "text"),
    }
    result = SearchResult(
        question=question,
        method="local",
        answer=written.answer,
        context=context,
        citations=citations_for(sources["id"].to_list(), reader.table("text_units"), reader.table("documents")),
        usage=Usage(context_tokens=built.tokens),
        generated_by=written.generated_by,
        details={"context_text": built.text, "budget": settings.budget},
    )
    return PreparedSearch(result, started, writer.llm, written.prompt, written.values)


MODE = ModeSearch(LocalSettings, prepare_local, inputs=("history", "exclude_entities"))
