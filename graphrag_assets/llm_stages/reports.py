"""LLM community reports, written bottom-up within an input token budget.

A community whose own entities and relationships fit the budget is described from them.
One that is too big is described from its sub-communities' reports (largest first, which
is why the deepest level is written first), topped up with the entities and relationships
those sub-communities do not cover. A failed call never drops a report: the community
gets the extractive report, marked as a fallback, and the failure is recorded.

A report is rewritten only when what the model would read changed. The context holds
only the community's own content (its members and their descriptions, its internal
relationships and their weights, the claims about its members when claims are extracted,
its sub-reports), in an order that does not depend on the rest of the graph; its hash
(with the model and the prompt) is stored as ``input_hash``, and a community whose hash
an existing report already has keeps that report as it is, with no call, whatever the
LLM cache holds.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections import Counter
from collections.abc import Sequence

import polars as pl

from graphrag_common.ids import content_hash
from graphrag_common.tokens import count_tokens

from ..core.claims import CLAIM_HEADER, CLAIM_SHARE, claim_line, claim_sort_key
from ..core.embedding import report_inputs
from ..core.reports import REPORT_COLUMNS, extractive_reports, report_id, report_row
from ..llm.client import ClientFactory, run_with
from ..llm.errors import LLMError, failure_frame
from ..llm.models import CommunityReport
from ..llm.prompts import load_prompt


@functools.lru_cache(maxsize=100_000)
def _line_tokens(line: str) -> int:
    """Tokens of one context line. An entity's line is counted for its community at every
    level and again when the context is packed: counted once."""
    return count_tokens(line + "\n")


FALLBACK = "extractive (LLM failed)"


def _pack_lines(lines: list[str], budget: int) -> tuple[list[str], int]:
    kept, used = [], 0
    for line in lines:
        cost = _line_tokens(line)
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    return kept, used


HEADERS = {
    "entities": "id|entity|description|links_in_community",
    "relationships": "id|source|target|description|weight",
    "claims": CLAIM_HEADER,
    "reports": "community|title|report",
}


def _local_rows(
    community: dict, entity_by_id: dict, relationship_by_id: dict
) -> tuple[list[dict], list[dict], list[str], list[str]]:
    """The community's entities (most linked inside the community first) and internal
    relationships (heaviest first), with their context lines. Nothing here depends on the
    graph outside the community (not global degrees), so a change elsewhere leaves the
    context, and so the report, as it was."""
    internal = sorted(
        (relationship_by_id[r] for r in community["relationship_ids"]),
        key=lambda r: (-r["weight"], r["source"], r["target"]),
    )
    links = Counter(end for r in internal for end in (r["source_id"], r["target_id"]))
    members = sorted((entity_by_id[e] for e in community["entity_ids"]), key=lambda e: (-links[e["id"]], e["title"]))
    entity_lines = [
        f"{e['human_readable_id']}|{e['title']}|{e['description']}|{links[e['id']]}".replace("\n", " ") for e in members
    ]
    relationship_lines = [
        f"{r['human_readable_id']}|{r['source']}|{r['target']}|{r['description']}|{r['weight']:g}".replace("\n", " ")
        for r in internal
    ]
    return members, internal, entity_lines, relationship_lines


def _available(budget: int) -> int:
    return max(budget - sum(count_tokens(h + "\n") for h in HEADERS.values()), 0)


def needs_sub_reports(community: dict, entity_by_id: dict, relationship_by_id: dict, budget: int) -> bool:
    """Whether the community's own entities and relationships overflow the budget."""
    _, _, entity_lines, relationship_lines = _local_rows(community, entity_by_id, relationship_by_id)
    return sum(_line_tokens(line) for line in entity_lines + relationship_lines) > _available(budget)


def _member_claims(community: dict, claims_by_entity: dict[str, list[dict]]) -> list[dict]:
    """Claims whose subject is a member, ordered by their content (subject, type, ...)."""
    return sorted((claim for e in community["entity_ids"] for claim in claims_by_entity.get(e, [])), key=claim_sort_key)


def report_context(
    community: dict,
    entity_by_id: dict,
    relationship_by_id: dict,
    reports_by_community: dict,
    communities_by_id: dict,
    budget: int,
    claims_by_entity: dict[str, list[dict]] | None = None,
) -> dict[str, str]:
    """The four context sections (entities, relationships, claims, sub-community reports),
    whose tokens together never exceed ``budget``. ``claims_by_entity`` holds resolved
    claims (``core.claims.resolve_claims``) by subject entity id; claims get at most
    ``CLAIM_SHARE`` of what the entities leave, relationships the rest."""
    members, internal, entity_lines, relationship_lines = _local_rows(community, entity_by_id, relationship_by_id)
    claims = _member_claims(community, claims_by_entity or {})
    available = _available(budget)
    full = sum(_line_tokens(line) for line in entity_lines + relationship_lines)
    report_lines: list[str] = []
    if full > available:
        children = [communities_by_id[c] for c in community["children"] if c in reports_by_community]
        children.sort(key=lambda c: (-c["size"], c["community"]))
        covered: set[str] = set()
        used = 0
        for child in children:
            report = reports_by_community[child["community"]]
            line = f"{child['community']}|{report['title']}|{report['full_content']}".replace("\n", " ")
            cost = _line_tokens(line)
            if used + cost > available * 3 // 4:
                break
            report_lines.append(line)
            used += cost
            covered |= set(child["entity_ids"])
        available -= used
        entity_lines = [line for line, e in zip(entity_lines, members) if e["id"] not in covered]
        relationship_lines = [
            line
            for line, r in zip(relationship_lines, internal)
            if not (r["source_id"] in covered and r["target_id"] in covered)
        ]
        claims = [claim for claim in claims if claim["subject_entity_id"] not in covered]
    entity_lines, used = _pack_lines(entity_lines, available // 2 if relationship_lines or claims else available)
    claim_lines, claims_used = _pack_lines(
        [claim_line(c) for c in claims],
        int((available - used) * CLAIM_SHARE) if relationship_lines else available - used,
    )
    relationship_lines, _ = _pack_lines(relationship_lines, available - used - claims_used)
    return {
        "entities": "\n".join([HEADERS["entities"], *entity_lines]),
        "relationships": "\n".join([HEADERS["relationships"], *relationship_lines]),
        "claims": "\n".join([HEADERS["claims"], *claim_lines]),
        "reports": "\n".join([HEADERS["reports"], *report_lines]),
    }


def _row(community: dict, report: CommunityReport, corpus: str, model: str, input_hash: str) -> dict:
    findings = [{"summary": f.summary, "explanation": f.explanation} for f in report.findings]
    return report_row(
        community, corpus, report.title, report.summary, report.rating, report.rating_explanation, findings, model
    ) | {"input_hash": input_hash}


def _kept(previous: dict, community: dict) -> dict:
    """An existing report moved onto the community that now has its content (its number,
    parent and children may have changed around it)."""
    placement = {
        key: community[key] for key in ("human_readable_id", "community", "level", "parent", "children", "size")
    }
    return previous | placement | {"id": report_id(previous["corpus"], community)}


def llm_reports(
    make_client: ClientFactory,
    communities: pl.DataFrame,
    entities: pl.DataFrame,
    relationships: pl.DataFrame,
    corpus: str,
    report_max_input_tokens: int,
    model: str,
    previous: pl.DataFrame | None = None,
    claims: pl.DataFrame | None = None,
    embed_ahead: Sequence[str] = (),
) -> tuple[pl.DataFrame, pl.DataFrame, list[int]]:
    """(reports, failures, context token counts of the reports written) for every
    community, deepest level first; reports in ``previous`` whose input is unchanged are
    kept without a call. ``claims`` are resolved claims (``core.claims.resolve_claims``):
    a community's context holds those about its members. With an embedding model, the
    texts of ``embed_ahead`` and of each report written are embedded while the other
    reports are being written (``LLMClient.embed_ahead``)."""
    prompt = load_prompt("community_report")
    claims_by_entity = _claims_by_entity(claims)
    entity_by_id = {row["id"]: row for row in entities.iter_rows(named=True)}
    relationship_by_id = {row["id"]: row for row in relationships.iter_rows(named=True)}
    communities_by_id = {row["community"]: row for row in communities.iter_rows(named=True)}
    reusable = _reusable(previous)
    reports: dict[int, dict] = {}
    failures: list[dict] = []
    context_tokens: list[int] = []

    async def run(client):
        client.embed_ahead(list(embed_ahead), flush=True)
        tasks: dict[int, asyncio.Task] = {}

        async def write(community: dict) -> None:
            # Only a community too big for the budget needs its children's reports first;
            # every other report starts at once, so the model stays busy across levels.
            if needs_sub_reports(community, entity_by_id, relationship_by_id, report_max_input_tokens):
                children = [tasks[c] for c in community["children"] if c in tasks]
                await asyncio.gather(*children)
            sections = report_context(
                community,
                entity_by_id,
                relationship_by_id,
                reports,
                communities_by_id,
                report_max_input_tokens,
                claims_by_entity,
            )
            input_hash = content_hash(json.dumps([model, prompt.version, sections], ensure_ascii=False))
            if input_hash in reusable:
                reports[community["community"]] = _kept(reusable[input_hash], community)
                return
            context_tokens.append(sum(count_tokens(text + "\n") for text in sections.values()))
            try:
                report = await client.structured(
                    "report", prompt.version, [{"role": "user", "content": prompt.render(**sections)}], CommunityReport
                )
                reports[community["community"]] = _row(community, report, corpus, model, input_hash)
                _embed_ahead(client, reports[community["community"]])
            except LLMError as error:
                failures.append({"item_id": str(community["community"]), "stage": "report", "error": str(error)})
                reports[community["community"]] = _fallback(community, communities, entities, relationships, corpus)

        # Every task exists before any runs, so a parent always finds its children's tasks.
        for community in _largest_first(communities):
            tasks[community["community"]] = asyncio.create_task(write(community))
        await asyncio.gather(*tasks.values())

    run_with(make_client, run)
    rows = [reports[c] for c in communities["community"].to_list()]
    # Failures were appended as calls ended: in community order, so equal runs record them alike.
    failures.sort(key=lambda failure: int(failure["item_id"]))
    return pl.DataFrame(rows, schema=REPORT_COLUMNS), failure_frame(failures), context_tokens


def _embed_ahead(client, report: dict) -> None:
    """Start embedding a report just written while the other reports are being written."""
    client.embed_ahead(report_inputs(pl.DataFrame([report], schema=REPORT_COLUMNS))["text"].to_list())


def _claims_by_entity(claims: pl.DataFrame | None) -> dict[str, list[dict]]:
    """The resolved claims about each entity (claims about no entity are in no context)."""
    claims_by_entity: dict[str, list[dict]] = {}
    for claim in (claims if claims is not None else pl.DataFrame()).iter_rows(named=True):
        if claim["subject_entity_id"] is not None:
            claims_by_entity.setdefault(claim["subject_entity_id"], []).append(claim)
    return claims_by_entity


def _reusable(previous: pl.DataFrame | None) -> dict[str, dict]:
    """The earlier reports by the hash of their input: one whose input recurs is kept."""
    return {
        row["input_hash"]: row
        for row in (previous if previous is not None else pl.DataFrame()).iter_rows(named=True)
        if row.get("input_hash")
    }


def _largest_first(communities: pl.DataFrame) -> list[dict]:
    """Largest first (by members and relationships): the longest calls start while the
    endpoint is fresh and short ones fill in at the end, instead of a long call left alone
    at the tail."""
    return sorted(
        communities.iter_rows(named=True), key=lambda c: (-c["size"] - len(c["relationship_ids"]), c["community"])
    )


def _fallback(
    community: dict, communities: pl.DataFrame, entities: pl.DataFrame, relationships: pl.DataFrame, corpus: str
) -> dict:
    """The extractive report of a community whose call failed, marked as the fallback."""
    fallback = extractive_reports(
        communities.filter(pl.col("community") == community["community"]), entities, relationships, corpus
    )
    return fallback.with_columns(pl.lit(FALLBACK).alias("generated_by")).row(0, named=True)
