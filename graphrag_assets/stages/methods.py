"""How each model-or-offline stage does its work, chosen once from the settings: the
methods bundle (``methods_for``). Each method carries the fingerprint of its stage (what a
build records, ``fingerprints``), and the stages call the method they are given without
asking which one it is. The model methods open their endpoint through a session factory
(``SessionFactory``): the Dagster resources give one per step of a run, ``plain_sessions``
one for work without Dagster."""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Protocol

import polars as pl

from graphrag_common.ids import keep_short_ids

from ..build_state import failure_rows
from ..core.claims import resolve_claims
from ..core.content import GRAPH_LIMIT, WRAPPING_COLUMNS
from ..core.embedding import entity_inputs
from ..core.extraction.offline import ExtractionSettings, graph_limit_rows, offline_records
from ..core.graph import build_graph
from ..core.inputs import given_title
from ..core.reports import extractive_reports
from ..core.resolution import apply_resolution, resolve, rule_decisions
from ..fingerprints import Fingerprint, current_fingerprints
from ..llm.cache import CallSite
from ..llm.errors import failure_frame
from ..llm.session import LLMSession
from ..llm.settings import LLMSettings
from ..llm_stages.extraction import LLMExtraction, extract_with_llm
from ..llm_stages.graph import build_llm_graph
from ..llm_stages.reports import llm_reports
from ..settings import IndexSettings
from ..storage.duckdb_store import IndexStore
from ..storage.schema import LLM_FAILURE_COLUMNS, TABLES

# The endpoint for one unit of work on a corpus, caching and recording its calls in the open store.
SessionFactory = Callable[[IndexStore, str], AbstractContextManager[LLMSession]]
Log = logging.Logger | logging.LoggerAdapter


def plain_sessions(endpoint: LLMSettings) -> SessionFactory:
    """Sessions outside a Dagster run (graphrag-import, builds run directly)."""
    return lambda store, corpus: LLMSession(endpoint, store.open_connection, CallSite(corpus))


@dataclass
class Extracted:
    entities: pl.DataFrame
    relationships: pl.DataFrame
    claims: pl.DataFrame
    failures: pl.DataFrame  # llm_failures rows, scoped by source partition
    method: dict  # how, and what it cost: the extractions' metadata
    # document_wrapping rows of the text left out of the graph (GRAPHRAG_MAX_DOCUMENT_PAIRS)
    left_out: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=WRAPPING_COLUMNS))


class Extraction(Protocol):
    fingerprint: Fingerprint

    def extract(self, store: IndexStore, corpus: str, units: pl.DataFrame, docs: pl.DataFrame, log: Log) -> Extracted:
        """The records of these text units (their documents: ``docs``)."""


@dataclass(frozen=True)
class OfflineExtraction:
    fingerprint: Fingerprint
    settings: ExtractionSettings

    def extract(self, store: IndexStore, corpus: str, units: pl.DataFrame, docs: pl.DataFrame, log: Log) -> Extracted:
        # A document's given title is an entity of each of its text units.
        titles = {
            row["id"]: title
            for row in docs.select("id", "title", "source_path").iter_rows(named=True)
            if (title := given_title(row["title"], row["source_path"]))
        }
        records = offline_records(units, titles, self.settings)
        method = {"method": "offline (rule-based English, jieba Chinese); no LLM calls", "llm_calls": 0}
        method["fingerprint"] = str(self.fingerprint)
        cut = report_cut_documents(records.cut, docs, self.settings.max_document_pairs, log)
        method |= {"documents_cut_at_graph_limit": cut} if cut else {}
        claims = pl.DataFrame(schema=TABLES["covariates"].columns)
        failures = pl.DataFrame(schema=LLM_FAILURE_COLUMNS)
        left_out = graph_limit_rows(records.cut, docs, units)
        return Extracted(records.entities, records.relationships, claims, failures, method, left_out)


def report_cut_documents(cut: pl.DataFrame, docs: pl.DataFrame, max_document_pairs: int, log: Log) -> dict[str, str]:
    """A warning per document cut at GRAPHRAG_MAX_DOCUMENT_PAIRS, naming it; as metadata
    (document -> how much of it is in the graph)."""
    named = cut.join(docs.select("id", "title", "source_partition"), left_on="document_id", right_on="id")
    report = {}
    for row in named.sort("source_partition", "title").iter_rows(named=True):
        name = f"{row['source_partition']}: {row['title']}"
        report[name] = f"{row['units_in_graph']} of {row['units']} text units in the graph"
        log.warning(
            f"document {name} was cut: only its first {row['units_in_graph']} of {row['units']} text units are in "
            f"the graph ({row['pairs_in_graph']} co-occurrence pairs; the next would pass "
            f"GRAPHRAG_MAX_DOCUMENT_PAIRS={max_document_pairs}). All of it stays chunked and searchable; see "
            f"document_wrapping (kind '{GRAPH_LIMIT}')"
        )
    return report


def screening_report(log: Log, extraction: LLMExtraction, answered_units: int) -> dict:
    """The names the screening left out or retyped, logged by reason with examples, and a
    warning when most answered units gave no entity (a model too weak for the task, or a
    structured mode the server does not follow); as metadata."""
    by_reason = extraction.rejections.group_by("reason").agg(pl.len(), pl.col("name").head(3)).sort("reason")
    for reason, count, examples in by_reason.iter_rows():
        log.info(f"extraction left out or retyped {count} name(s), {reason}: e.g. {', '.join(examples)}")
    empty = extraction.units_without_entities
    if answered_units and empty > answered_units / 2:
        log.warning(
            f"the model gave no entity for {empty} of {answered_units} text units: check GRAPHRAG_LLM_MODEL and "
            "GRAPHRAG_LLM_MODE (see the README's model section)"
        )
    return {
        "names_screened_out": {reason: count for reason, count, _ in by_reason.iter_rows()},
        "text_units_without_entities": empty,
    }


@dataclass(frozen=True)
class ModelExtraction:
    fingerprint: Fingerprint
    llm: LLMSettings
    sessions: SessionFactory

    def extract(self, store: IndexStore, corpus: str, units: pl.DataFrame, docs: pl.DataFrame, log: Log) -> Extracted:
        llm = self.llm
        with self.sessions(store, corpus) as session:
            extraction = extract_with_llm(
                session.client,
                units,
                llm.entity_type_list(),
                llm.gleanings,
                llm.claim_description if llm.claims else None,
            )
        entities, relationships, claims, failed = extraction[:4]
        answered = units.height - failed.filter(pl.col("stage") == "extraction").height
        screening = screening_report(log, extraction, answered)
        # Claims already indexed keep their short numbers (reports and answers cite them).
        claims = keep_short_ids(claims, store.short_ids("covariates", [corpus]))
        scopes = dict(zip(units["id"], units["source_partition"]))
        failures = failure_rows(failed, corpus, pl.col("item_id").replace_strict(scopes, return_dtype=pl.String))
        for failure in failures.iter_rows(named=True):
            log.error(
                f"LLM {failure['stage']} failed for text unit {failure['item_id']} of {failure['scope']}: "
                f"{failure['error']}"
            )
        method = {"method": f"llm ({llm.model_for('extraction')})", "fingerprint": str(self.fingerprint)}
        method |= session.usage.metadata() | screening
        return Extracted(entities, relationships, claims, failures, method)


@dataclass
class Graph:
    """A corpus's merged graph, before its short ids are kept: the entities, relationships
    and merges, the failed summary calls and what the calls cost."""

    entities: pl.DataFrame
    relationships: pl.DataFrame
    merges: pl.DataFrame
    failures: pl.DataFrame
    usage: dict


class GraphMerge(Protocol):
    fingerprint: Fingerprint

    def merge(self, store: IndexStore, corpus: str, extracted: dict[str, pl.DataFrame], pairs: pl.DataFrame) -> Graph:
        """The graph of the corpus's records (``extracted``: text_units, extracted_entities,
        extracted_relationships), with the resolution's candidate ``pairs``."""


@dataclass(frozen=True)
class RuleGraph:
    fingerprint: Fingerprint
    settings: IndexSettings

    def merge(self, store: IndexStore, corpus: str, extracted: dict[str, pl.DataFrame], pairs: pl.DataFrame) -> Graph:
        records = extracted["extracted_entities"]
        mapping, merges = resolve(records, corpus, decisions=rule_decisions(pairs))
        entities, relationships = apply_resolution(records, extracted["extracted_relationships"], mapping)
        entities, relationships = build_graph(
            entities, relationships, extracted["text_units"], corpus, self.settings.graph()
        )
        usage = {"llm_calls": 0, "fingerprint": str(self.fingerprint)}
        return Graph(entities, relationships, merges, failure_frame([]), usage)


@dataclass(frozen=True)
class ModelGraph:
    fingerprint: Fingerprint
    llm: LLMSettings
    sessions: SessionFactory

    def merge(self, store: IndexStore, corpus: str, extracted: dict[str, pl.DataFrame], pairs: pl.DataFrame) -> Graph:
        with self.sessions(store, corpus) as session:
            entities, relationships, merges, failures = build_llm_graph(
                session.client,
                extracted["extracted_entities"],
                extracted["extracted_relationships"],
                extracted["text_units"],
                corpus,
                pairs,
                self.llm.confirm_merges,
            )
        usage = session.usage.metadata() | {"fingerprint": str(self.fingerprint)}
        return Graph(entities, relationships, merges, failures, usage)


class ReportWriting(Protocol):
    fingerprint: Fingerprint

    def write(self, store: IndexStore, corpus: str, graph: dict[str, pl.DataFrame], kept: pl.DataFrame | None):
        """(reports, failed calls, metadata) of the corpus's communities (``graph``:
        communities, entities, relationships); ``kept``: the reports that may be kept."""


@dataclass(frozen=True)
class ExtractiveReports:
    fingerprint: Fingerprint

    def write(self, store: IndexStore, corpus: str, graph: dict[str, pl.DataFrame], kept: pl.DataFrame | None):
        reports = extractive_reports(graph["communities"], graph["entities"], graph["relationships"], corpus)
        usage = {"generated_by": "extractive (no LLM)", "llm_calls": 0, "fingerprint": str(self.fingerprint)}
        return reports, failure_frame([]), usage


@dataclass(frozen=True)
class ModelReports:
    fingerprint: Fingerprint
    llm: LLMSettings
    sessions: SessionFactory

    def write(self, store: IndexStore, corpus: str, graph: dict[str, pl.DataFrame], kept: pl.DataFrame | None):
        entities = graph["entities"]
        # Claims name entities as extracted; here they meet the entities they were merged into.
        claims = resolve_claims(
            store.read_table("covariates", "corpus", [corpus]),
            entities,
            store.read_table("entity_merges", "corpus", [corpus]),
        )
        model = self.llm.model_for("report")
        with self.sessions(store, corpus) as session:
            reports, failures, context_tokens = llm_reports(
                session.client,
                graph["communities"],
                entities,
                graph["relationships"],
                corpus,
                report_max_input_tokens=self.llm.report_max_input_tokens,
                model=model,
                previous=kept,
                claims=claims,
                embed_ahead=entity_inputs(entities)["text"].to_list(),
            )
        usage = session.usage.metadata() | {
            "max_context_tokens": max(context_tokens, default=0),
            "generated_by": model,
            "reports_written": len(context_tokens),
            "reports_kept_unchanged": reports.height - len(context_tokens),
            "claims_of_entities": int(claims["subject_entity_id"].is_not_null().sum()),
            "fingerprint": str(self.fingerprint),
        }
        return reports, failures, usage


@dataclass(frozen=True)
class Methods:
    """The model-or-offline stages' methods of one build. Each method's fingerprint (its
    stage's code version and the settings it reads) is in the metadata of what it made."""

    extraction: Extraction
    graph: GraphMerge
    reports: ReportWriting


def methods_for(settings: IndexSettings, llm: LLMSettings, sessions: SessionFactory) -> Methods:
    """The methods the settings choose: the model's when GRAPHRAG_LLM_MODEL is set, else
    the offline ones. The one place the choice is made."""
    fingerprints = current_fingerprints(settings)
    if not llm.enabled:
        return Methods(
            OfflineExtraction(fingerprints["extraction"], settings.extraction()),
            RuleGraph(fingerprints["graph"], settings),
            ExtractiveReports(fingerprints["reports"]),
        )
    return Methods(
        ModelExtraction(fingerprints["extraction"], llm, sessions),
        ModelGraph(fingerprints["graph"], llm, sessions),
        ModelReports(fingerprints["reports"], llm, sessions),
    )
