"""Extractive community reports: the offline stand-in for LLM-written reports.

Same columns as an LLM report, honestly marked ``generated_by = 'extractive'``: the title
names the most central entities, the summary states the community's make-up and its
strongest evidence, and 5-10 findings quote the most relevant evidence sentences (the
heaviest relationships first, then the best-connected entities), each citing its rows.
"""

from __future__ import annotations

import json
import math
from collections import Counter

import polars as pl

from graphrag_common.ids import content_hash, stable_id

from .communities import HIERARCHY_COLUMNS

REPORT_COLUMNS = {
    **HIERARCHY_COLUMNS,
    "summary": pl.String,
    "full_content": pl.String,
    "rank": pl.Float64,
    "rating_explanation": pl.String,
    "findings": pl.List(pl.Struct({"summary": pl.String, "explanation": pl.String})),
    "full_content_json": pl.String,
    "period": pl.String,
    "size": pl.Int64,
    "corpus": pl.String,
    "generated_by": pl.String,
    "content_hash": pl.String,
    "input_hash": pl.String,  # what the writer read (model reports only): unchanged input, report kept
}
EXTRACTIVE = "extractive"
MIN_FINDINGS, MAX_FINDINGS = 5, 10


def _names(titles: list[str]) -> str:
    if len(titles) == 1:
        return titles[0]
    return ", ".join(titles[:-1]) + " and " + titles[-1]


def _findings(members: list[dict], internal: list[dict]) -> list[dict]:
    """Up to 10 findings: the heaviest relationships first (at most six, so that the most
    central entities get a say), then entities by degree, then more relationships."""
    relationship_findings = [
        {
            "summary": f"{r['source']} and {r['target']}",
            "evidence": r["description"],
            "explanation": f"{r['description']} [Data: Relationships ({r['human_readable_id']})]",
        }
        for r in internal
    ]
    entity_findings = [
        {
            "summary": f"{e['title']} ({e['type'].lower()})",
            "evidence": e["description"],
            "explanation": f"{e['description']} [Data: Entities ({e['human_readable_id']})]",
        }
        for e in members
        if e["description"]
    ]
    findings: list[dict] = []
    seen: set[str] = set()
    for candidates, limit in (
        (relationship_findings, 6),
        (entity_findings, MAX_FINDINGS),
        (relationship_findings, MAX_FINDINGS),
    ):
        for candidate in candidates:
            if len(findings) >= limit:
                break
            if candidate["evidence"] not in seen:
                seen.add(candidate["evidence"])
                findings.append({"summary": candidate["summary"], "explanation": candidate["explanation"]})
    return findings


def report_id(corpus: str, community: dict) -> str:
    return stable_id(corpus, "community_report", community["id"])


def report_row(
    community: dict,
    corpus: str,
    title: str,
    summary: str,
    rating: float,
    rating_explanation: str,
    findings: list[dict],
    generated_by: str,
) -> dict:
    """A ``community_reports`` row, whoever wrote the report (extractive or a model)."""
    full_content = "\n\n".join([f"# {title}", summary] + [f"## {f['summary']}\n\n{f['explanation']}" for f in findings])
    document = {
        "title": title,
        "summary": summary,
        "rating": rating,
        "rating_explanation": rating_explanation,
        "findings": findings,
    }
    return {
        "id": report_id(corpus, community),
        "human_readable_id": community["human_readable_id"],
        "community": community["community"],
        "level": community["level"],
        "parent": community["parent"],
        "children": community["children"],
        "title": title,
        "summary": summary,
        "full_content": full_content,
        "rank": float(rating),
        "rating_explanation": rating_explanation,
        "findings": findings,
        "full_content_json": json.dumps(document, ensure_ascii=False),
        "period": community["period"],
        "size": community["size"],
        "corpus": corpus,
        "generated_by": generated_by,
        "content_hash": content_hash(full_content),
        "input_hash": None,
    }


def extractive_reports(
    communities: pl.DataFrame, entities: pl.DataFrame, relationships: pl.DataFrame, corpus: str
) -> pl.DataFrame:
    entity_by_id = {row["id"]: row for row in entities.iter_rows(named=True)}
    relationship_by_id = {row["id"]: row for row in relationships.iter_rows(named=True)}
    internal_weight = {
        row["id"]: sum(relationship_by_id[r]["weight"] for r in row["relationship_ids"])
        for row in communities.iter_rows(named=True)
    }
    heaviest = max(internal_weight.values(), default=0.0)
    rows = []
    for community in communities.iter_rows(named=True):
        members = sorted(
            (entity_by_id[e] for e in community["entity_ids"]),
            key=lambda e: (-e["degree"], -e["frequency"], e["title"]),
        )
        internal = sorted(
            (relationship_by_id[r] for r in community["relationship_ids"]),
            key=lambda r: (-r["weight"], r["source"], r["target"]),
        )
        central = [m["title"] for m in members[:3]]
        title = _names(central)
        types = Counter(m["type"].lower() for m in members)
        make_up = ", ".join(f"{n} {t}" for t, n in sorted(types.items(), key=lambda item: (-item[1], item[0])))
        findings = _findings(members, internal)
        lead = findings[0]["explanation"].rsplit(" [Data:", 1)[0] if findings else ""
        summary = (
            f"A community of {len(members)} entities ({make_up}) linked by {len(internal)} relationships, "
            f"centred on {title}. {lead}"
        ).strip()
        rank = round(10 * math.log1p(internal_weight[community["id"]]) / math.log1p(heaviest), 2) if heaviest else 0.0
        rating_explanation = (
            f"Extractive rank {rank}: total weight of this community's relationships relative to the "
            "heaviest community of the corpus (no LLM was used)."
        )
        rows.append(report_row(community, corpus, title, summary, rank, rating_explanation, findings, EXTRACTIVE))
    return pl.DataFrame(rows, schema=REPORT_COLUMNS)
