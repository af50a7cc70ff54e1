"""``evaluations``: each complete build of a corpus with a questions file
(``GRAPHRAG_EVAL_QUESTIONS``) is asked its questions before it is published, by the query
side itself (``graphrag_query.evaluation``), on a copy of the index as the build left it.
The rows go to the ``evaluations`` table; the check compares them with the previous build's
and, with ``GRAPHRAG_EVAL_BLOCKS_PUBLISHING``, keeps a build that answers worse from
readers."""

import tempfile
import time
from pathlib import Path

import polars as pl
from dagster import AssetExecutionContext, MaterializeResult, MetadataValue, asset

from graphrag_assets.build_state import against_published_build, last_build
from graphrag_assets.configuration import value_of
from graphrag_assets.core.evaluation import (
    EVALUATION_COLUMNS,
    QuestionsError,
    build_id,
    questions_file_for,
    read_questions,
    summary,
    summary_markdown,
    trend_svg,
    with_build,
)
from graphrag_assets.defs.assets.shared import GRAPH_ASSET_OPTIONS
from graphrag_assets.defs.automation import FOLLOW_SOURCES
from graphrag_assets.defs.checks import ANSWERS_DID_NOT_REGRESS, answers_did_not_regress
from graphrag_assets.defs.metadata import svg_image, table_metadata
from graphrag_assets.defs.resources import IndexDatabase
from graphrag_assets.settings import IndexSettings
from graphrag_assets.storage.snapshot import copy_for_evaluation

BUILDS_SHOWN = 10  # builds in the metadata's table and plot


def ask_the_build(database: Path, corpus: str, questions, modes: tuple[str, ...], use_llm: bool) -> pl.DataFrame:
    """The measures of a build not yet published: the query side reads a copy of the index."""
    from graphrag_query import IndexReader
    from graphrag_query.evaluation import evaluate

    with tempfile.TemporaryDirectory(prefix="graphrag-evaluation-", dir=database.parent) as folder:
        copy = copy_for_evaluation(database, Path(folder))
        reader = IndexReader(str(copy), corpus).load()
        return evaluate(reader, questions, modes, use_llm=use_llm)


@asset(
    deps=["embeddings"],
    code_version="evaluations-v1",
    description=(
        "Answer quality of the build: the corpus's questions (GRAPHRAG_EVAL_QUESTIONS) asked in each query mode "
        "before the build is published; per question, whether the answer states an expected answer, refusals, gold "
        "documents in the context at 2k/4k/8k tokens, latency. Nothing to do for a corpus without questions."
    ),
    kinds={"duckdb", "polars"},
    check_specs=[ANSWERS_DID_NOT_REGRESS],
    automation_condition=FOLLOW_SOURCES,
    **GRAPH_ASSET_OPTIONS,
)
def evaluations(context: AssetExecutionContext, settings: IndexSettings, database: IndexDatabase) -> MaterializeResult:
    started = time.perf_counter()
    corpus = context.partition_key
    path = questions_file_for(corpus, value_of("GRAPHRAG_EVAL_QUESTIONS"))
    blocks = value_of("GRAPHRAG_EVAL_BLOCKS_PUBLISHING")
    if path is None:
        return MaterializeResult(
            metadata={"questions_file": "none (GRAPHRAG_EVAL_QUESTIONS names none for this corpus)"},
            check_results=[answers_did_not_regress(None, blocks, {})],
        )
    if settings.location().lake is not None:
        # A DuckLake build is read by version once published: graphrag-eval measures it then.
        problem = "a DuckLake index is evaluated after publishing, with graphrag-eval"
        return MaterializeResult(
            metadata={"questions_file": str(path)}, check_results=[answers_did_not_regress(None, blocks, {}, problem)]
        )
    from graphrag_query.evaluation import parse_modes  # the query side, needed by this step only

    try:
        questions = read_questions(path)
        modes = parse_modes(value_of("GRAPHRAG_EVAL_MODES"))
    except ValueError as error:
        # A bad questions file or list of modes is the evaluation's problem, not the build's:
        # the build is published anyway.
        problem = str(error) if isinstance(error, QuestionsError) else f"GRAPHRAG_EVAL_MODES: {error}"
        context.log.warning(problem)
        return MaterializeResult(
            metadata={"questions_file": str(path)},
            check_results=[answers_did_not_regress(None, blocks, {}, f"not evaluated: {problem}")],
        )
    with database.store() as store:
        store.ensure_schema()
        built_at = last_build(store, corpus)["built_at"]
    measures = ask_the_build(Path(settings.db), corpus, questions, modes, value_of("GRAPHRAG_EVAL_LLM"))
    rows = with_build(measures, corpus, built_at)
    with database.store() as store:
        with store.transaction() as tx:
            tx.replace("evaluations", rows, [build_id(corpus, built_at)])
        verdict = against_published_build(store, settings, corpus)
        earlier = store.read(
            "SELECT * FROM evaluations WHERE corpus = ? AND built_at < ? ORDER BY built_at", [corpus, built_at]
        ).cast(EVALUATION_COLUMNS)
    shown = earlier["build_id"].unique(maintain_order=True).to_list()[-(BUILDS_SHOWN - 1) :]
    trend = summary(pl.concat([earlier.filter(pl.col("build_id").is_in(shown)), rows]))
    metadata = table_metadata(
        "evaluations", rows, ["mode", "question_id", "answer_contains", "refused", "gold_present_4k", "seconds"]
    ) | {
        "questions_file": str(path),
        "questions": len(questions),
        "compared_with": verdict.previous_build if verdict else "none (no earlier build was evaluated)",
        "seconds": time.perf_counter() - started,
        "builds": MetadataValue.md(summary_markdown(trend)),
    }
    # A plot of each rate the questions measure (answers need expected answers, evidence gold documents).
    for name, rate, title in [
        ("answer_trend", "answer_contains", "Answers stating an expected answer, per mode and build"),
        ("evidence_trend", "gold_present_4k", "Gold documents in the 4k context, per mode and build"),
    ]:
        if trend[rate].is_not_null().any():
            metadata[name] = svg_image(trend_svg(trend, rate), title)
    # One number per mode and rate: the UI plots each over the materializations.
    for row in summary(rows).iter_rows(named=True):
        for rate in ("answer_contains", "gold_present_4k"):
            if row[rate] is not None:
                metadata[f"{row['mode']}_{rate}"] = float(row[rate])
        metadata[f"{row['mode']}_refusals"] = int(row["refusals"])
    comparison = verdict.comparison if verdict else None
    return MaterializeResult(metadata=metadata, check_results=[answers_did_not_regress(comparison, blocks, {})])
