"""The asset checks: each a spec (what the UI lists under the asset) and a function that
evaluates it, over the step's open index store or the frames the step wrote. The steps
evaluate their checks right after their write, in the same step, so a check always sees
the rows that step wrote and a failed check is on the materialization that caused it.

A new check: a spec here, a function beside it, the spec in the asset's ``check_specs``
and the function's result in its ``check_results``.
"""

from __future__ import annotations

import polars as pl
from dagster import AssetCheckResult, AssetCheckSeverity, AssetCheckSpec, MetadataValue

from ..core.evaluation import Comparison
from ..storage.duckdb_store import IndexStore


def _result(spec: AssetCheckSpec, passed: bool, metadata: dict) -> AssetCheckResult:
    # Severity ERROR (Dagster's default) for every check: each one means rows are missing or wrong.
    return AssetCheckResult(check_name=spec.name, asset_key=spec.asset_key, passed=passed, metadata=metadata)


def _listing(lines: list[str]) -> MetadataValue:
    return MetadataValue.md("\n".join(f"- {line}" for line in lines) or "none")


SOURCES_READABLE = AssetCheckSpec(
    "sources_readable", asset="documents", description="Every source file of the run could be read."
)


def sources_readable(errors: list[dict]) -> AssetCheckResult:
    """``errors``: the run's ``source_errors`` rows."""
    return _result(SOURCES_READABLE, not errors, {"unreadable": _listing([e["error"] for e in errors])})


TEXT_UNITS_BELONG_TO_DOCUMENTS = AssetCheckSpec(
    "text_units_belong_to_documents", asset="text_units", description="Every text unit's document_id is a document."
)


def text_units_belong_to_documents(store: IndexStore, corpus: str) -> AssetCheckResult:
    orphans = store.read(
        "SELECT t.id FROM text_units t ANTI JOIN documents d ON t.document_id = d.id WHERE t.corpus = ?", [corpus]
    )
    return _result(TEXT_UNITS_BELONG_TO_DOCUMENTS, orphans.is_empty(), {"orphans": orphans.height})


ENDPOINTS_ARE_ENTITIES = AssetCheckSpec(
    "endpoints_are_entities", asset="relationships", description="Every relationship's source and target is an entity."
)


def endpoints_are_entities(store: IndexStore, corpus: str) -> AssetCheckResult:
    dangling = store.read(
        "SELECT r.id FROM relationships r WHERE r.corpus = $1 "
        "AND (r.source NOT IN (SELECT title FROM entities WHERE corpus = $1) "
        "OR r.target NOT IN (SELECT title FROM entities WHERE corpus = $1))",
        [corpus],
    )
    return _result(ENDPOINTS_ARE_ENTITIES, dangling.is_empty(), {"dangling": dangling.height})


MEMBERS_EXIST = AssetCheckSpec(
    "members_exist", asset="communities", description="Every community member is an entity of the corpus."
)


def members_exist(store: IndexStore, corpus: str) -> AssetCheckResult:
    missing = store.read(
        "SELECT DISTINCT m.entity_id "
        "FROM (SELECT unnest(entity_ids) AS entity_id FROM communities WHERE corpus = $1) m "
        "ANTI JOIN (SELECT id FROM entities WHERE corpus = $1) e ON m.entity_id = e.id",
        [corpus],
    )
    return _result(MEMBERS_EXIST, missing.is_empty(), {"missing_members": missing.height})


EVERY_COMMUNITY_HAS_A_REPORT = AssetCheckSpec(
    "every_community_has_a_report", asset="community_reports", description="Every community has a report."
)


def every_community_has_a_report(store: IndexStore, corpus: str) -> AssetCheckResult:
    unreported = store.read(
        "SELECT c.community FROM communities c ANTI JOIN community_reports r "
        "ON c.community = r.community AND r.corpus = c.corpus WHERE c.corpus = ?",
        [corpus],
    )
    return _result(EVERY_COMMUNITY_HAS_A_REPORT, unreported.is_empty(), {"without_report": unreported.height})


VECTOR_DIMENSIONS_CONSISTENT = AssetCheckSpec(
    "vector_dimensions_consistent",
    asset="embeddings",
    description="One dimension per model, equal in DuckDB and LanceDB counts.",
)


def vector_dimensions_consistent(rows: pl.DataFrame, mirrored: dict[str, int]) -> AssetCheckResult:
    """``rows``: the corpus's embeddings as written to DuckDB; ``mirrored``: rows per kind in LanceDB."""
    dimensions = rows.select(pl.col("vector").list.len().unique()).to_series().to_list()
    by_kind = {kind: n for kind, n in rows["kind"].value_counts().iter_rows()}
    consistent = len(dimensions) <= 1 and all(mirrored[kind] == by_kind.get(kind, 0) for kind in mirrored)
    return _result(
        VECTOR_DIMENSIONS_CONSISTENT,
        consistent,
        {"dimensions_seen": str(dimensions), "lancedb_rows": str(mirrored), "duckdb_rows": str(by_kind)},
    )


# LLM calls that failed after their retries (the rows the step stored in llm_failures).
EXTRACTION_CALLS_SUCCEEDED = AssetCheckSpec(
    "extraction_calls_succeeded",
    asset="extractions",
    description="No text unit's LLM extraction (or claim) call failed.",
)
SUMMARY_CALLS_SUCCEEDED = AssetCheckSpec(
    "summary_calls_succeeded", asset="entities", description="No description summary or merge confirmation call failed."
)
REPORT_CALLS_SUCCEEDED = AssetCheckSpec(
    "report_calls_succeeded",
    asset="community_reports",
    description="No report fell back to extractive after an LLM failure.",
)


def calls_succeeded(spec: AssetCheckSpec, failures: pl.DataFrame) -> AssetCheckResult:
    """``failures``: llm_failures rows (scope, stage, item_id, error)."""
    lines = [f"{f['scope']} / {f['stage']} / {f['item_id']}: {f['error']}" for f in failures.iter_rows(named=True)]
    return _result(spec, failures.is_empty(), {"failed": _listing(lines)})


# Failed with severity ERROR when GRAPHRAG_EVAL_BLOCKS_PUBLISHING is set, and then
# published_index refuses the build (on every later try too, as it decides from the
# evaluations table); else a warning.
ANSWERS_DID_NOT_REGRESS = AssetCheckSpec(
    "answers_did_not_regress",
    asset="evaluations",
    description=(
        "No query mode answers or finds evidence worse than on the previous build by more than "
        "GRAPHRAG_EVAL_MAX_DROP points than on the build readers have; the questions that got worse are listed."
    ),
)


def answers_did_not_regress(
    comparison: Comparison | None, blocks_publishing: bool, metadata: dict, problem: str | None = None
) -> AssetCheckResult:
    """``comparison``: this build against the previous one (None: nothing to compare with);
    ``problem``: why the build could not be evaluated (an unreadable questions file), a
    warning that never blocks."""
    if problem is not None:
        return AssetCheckResult(
            check_name=ANSWERS_DID_NOT_REGRESS.name,
            asset_key=ANSWERS_DID_NOT_REGRESS.asset_key,
            passed=False,
            severity=AssetCheckSeverity.WARN,
            metadata=metadata | {"problem": problem},
        )
    passed = comparison is None or comparison.passed
    details = {}
    if comparison is not None:
        details = {
            "drops": _listing(comparison.drops),
            "questions_regressed": comparison.regressed.height,
            "regressed_questions": regressed_listing(comparison),
        }
    return AssetCheckResult(
        check_name=ANSWERS_DID_NOT_REGRESS.name,
        asset_key=ANSWERS_DID_NOT_REGRESS.asset_key,
        passed=passed,
        severity=AssetCheckSeverity.ERROR if blocks_publishing else AssetCheckSeverity.WARN,
        metadata=metadata | details,
    )


def regressed_listing(comparison: Comparison) -> MetadataValue:
    return _listing(
        [
            f"{row['mode']} / {row['question_id']} ({row['question']}): {row['what']}"
            for row in comparison.regressed.iter_rows(named=True)
        ]
    )
