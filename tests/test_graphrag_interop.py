"""graphrag-import / graphrag-export against a real index built by Microsoft GraphRAG 3.1
(with an LLM) over A Christmas Carol: every query mode answers over the import offline,
export gives back graphrag's tables, bad input changes nothing, re-import replaces."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pytest
from polars.testing import assert_series_equal

from graphrag_assets.interop.graphrag_parquet import (
    GRAPHRAG_COLUMNS,
    NOT_KEPT_COLUMNS,
    GraphragFormatError,
    checked_graphrag_table,
)
from graphrag_assets.storage.snapshot import published_builds, read_pointer
from graphrag_assets.storage.vector_store import VectorStore

from .conftest import REPO

GRAPHRAG_SAMPLE = REPO.parent / "shared" / "graphrag-index" / "christmas_carol"
pytestmark = pytest.mark.skipif(
    not GRAPHRAG_SAMPLE.is_dir(),
    reason=f"{GRAPHRAG_SAMPLE} is absent: the graphrag 3.1 index of A Christmas Carol beside the checkout",
)
BIN = Path(sys.executable).parent
CORPUS_TABLES = [
    "documents",
    "text_units",
    "extracted_entities",
    "covariates",
    "sources",
    "entities",
    "relationships",
    "communities",
    "community_reports",
    "embeddings",
    "search_terms",
    "corpus_builds",
]


def run(command: str, *args: str) -> subprocess.CompletedProcess:
    """A console script of the project, offline whatever the environment configures."""
    environment = {
        k: v for k, v in os.environ.items() if not k.startswith(("GRAPHRAG_LLM_", "GRAPHRAG_EMBEDDING_", "OPENAI_"))
    }
    return subprocess.run([str(BIN / command), *args], capture_output=True, text=True, env=environment, timeout=600)


def import_sample(folder: Path, corpus: str, database: Path) -> subprocess.CompletedProcess:
    return run(
        "graphrag-import",
        str(folder),
        "--corpus",
        corpus,
        "--db",
        str(database),
        "--vectors",
        str(database.parent / "lancedb"),
    )


def corpus_rows(database: Path, corpus: str) -> dict[str, pl.DataFrame]:
    """Every row of the corpus in the published snapshot, per table, in a stable order."""
    with duckdb.connect(read_pointer(database)["snapshot"], read_only=True) as connection:
        return {
            table: connection.execute(
                f'SELECT * EXCLUDE (vector) FROM "{table}" WHERE corpus = ?'
                if table == "embeddings"
                else f'SELECT * FROM "{table}" WHERE corpus = ?',
                [corpus],
            )
            .pl()
            .pipe(lambda frame: frame.sort(frame.columns[:4]))
            for table in CORPUS_TABLES
        }


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> Path:
    """A DuckDB index holding the sample imported twice, as ``carol`` and ``carol_again``."""
    database = tmp_path_factory.mktemp("graphrag_import") / "graphrag.duckdb"
    for corpus in ("carol", "carol_again"):
        result = import_sample(GRAPHRAG_SAMPLE, corpus, database)
        assert result.returncode == 0, result.stderr
    return database


@pytest.mark.parametrize("method", ["global", "local", "drift", "basic"])
def test_every_mode_answers_offline_from_imported_text_units(index, method):
    from graphrag_query import search
    from graphrag_query.result import NO_DATA_ANSWER

    result = search(
        "What do the ghosts show Scrooge?", method=method, use_llm=False, database=str(index), corpus="carol"
    )
    imported_units = set(pl.read_parquet(GRAPHRAG_SAMPLE / "text_units.parquet")["id"])
    assert result.method == method and result.generated_by == "extractive"
    assert "Scrooge" in result.answer and NO_DATA_ANSWER not in result.answer
    assert result.citations
    assert all(
        c.text_unit_id in imported_units and c.document_title == "a-christmas-carol.txt" for c in result.citations
    )


def test_import_is_published_for_the_query_and_sql_commands(index):
    # Done as a build is: its vectors mirrored and its build published (build_state.corpus_work).
    assert VectorStore(index.parent / "lancedb").mirrored_builds()["carol"] == published_builds(index)["carol"]
    answered = run(
        "graphrag-query", "Who is Scrooge's clerk?", "--method", "local", "--db", str(index), "--corpus", "carol"
    )
    assert answered.returncode == 0, answered.stderr
    assert "Sources:" in answered.stdout and "a-christmas-carol.txt" in answered.stdout
    counted = run(
        "graphrag-sql", "--db", str(index), "SELECT count(*) AS entities FROM entities WHERE corpus = 'carol'"
    )
    assert (
        counted.returncode == 0 and str(pl.read_parquet(GRAPHRAG_SAMPLE / "entities.parquet").height) in counted.stdout
    )


def test_export_gives_back_graphrags_tables_column_by_column(index, tmp_path):
    exported = run("graphrag-export", str(tmp_path / "out"), "--corpus", "carol", "--db", str(index))
    assert exported.returncode == 0, exported.stderr
    for table, columns in GRAPHRAG_COLUMNS.items():
        original = pl.read_parquet(GRAPHRAG_SAMPLE / f"{table}.parquet")
        # Rows are compared by id: export writes them in human_readable_id order, graphrag
        # wrote community reports in the order it finished them.
        written = pl.read_parquet(tmp_path / "out" / f"{table}.parquet").sort("id")
        original = original.sort("id")
        assert written.columns == list(columns) == original.columns
        assert written.schema == original.schema
        for column in columns:
            if column in NOT_KEPT_COLUMNS.get(table, ()):
                # Not kept by our index (documents.creation_date, raw_data): exported null.
                assert written[column].is_null().all(), (table, column)
                continue
            assert_series_equal(written[column], original[column], check_names=True)


def test_export_of_a_corpus_not_in_the_index_exits_2(index, tmp_path):
    exported = run("graphrag-export", str(tmp_path / "out"), "--corpus", "scrooge", "--db", str(index))
    assert exported.returncode == 2 and "corpus 'scrooge' has no documents" in exported.stderr
    assert not (tmp_path / "out").exists()


def test_import_embeds_with_the_configured_endpoint_model(fake_llm, tmp_path):
    """With GRAPHRAG_EMBEDDING_MODEL set, the import embeds through the endpoint (as the
    embeddings asset does) and queries embed the question with the same model."""
    from graphrag_assets.interop.loading import import_graphrag
    from graphrag_assets.settings import IndexSettings
    from graphrag_query import local_search

    settings = IndexSettings.from_env({}, db=str(tmp_path / "graphrag.duckdb"), vectors=str(tmp_path / "lancedb"))
    rows = import_graphrag(GRAPHRAG_SAMPLE, "carol", settings)
    models = corpus_rows(tmp_path / "graphrag.duckdb", "carol")["embeddings"]["model"].unique().to_list()
    embedded = sum(
        pl.read_parquet(GRAPHRAG_SAMPLE / f"{table}.parquet").height
        for table in ("text_units", "entities", "community_reports")
    )
    assert models == ["fake-embed"] and rows["embeddings"] == embedded and fake_llm.embedding_requests
    result = local_search("Who is Scrooge's clerk?", use_llm=False, database=settings.db, corpus="carol")
    assert result.citations


def test_reimport_replaces_the_corpus_and_leaves_the_others(index):
    before = corpus_rows(index, "carol")
    other = corpus_rows(index, "carol_again")
    result = import_sample(GRAPHRAG_SAMPLE, "carol", index)
    assert result.returncode == 0, result.stderr
    after = corpus_rows(index, "carol")
    for table in CORPUS_TABLES:
        assert after[table].height == before[table].height, table  # replaced, not added to
    assert after["corpus_builds"]["built_at"][0] > before["corpus_builds"]["built_at"][0]
    assert after["entities"].equals(before["entities"]) and after["text_units"].equals(before["text_units"])
    untouched = corpus_rows(index, "carol_again")
    assert all(untouched[table].equals(other[table]) for table in CORPUS_TABLES)


def _without_file(folder: Path) -> Path:
    (folder / "entities.parquet").unlink()
    return folder


def _without_column(folder: Path) -> Path:
    relationships = pl.read_parquet(folder / "relationships.parquet")
    relationships.drop("weight").write_parquet(folder / "relationships.parquet")
    return folder


@pytest.mark.parametrize(
    "damage, named",
    [
        (lambda folder: folder / "no such folder", "no such folder"),
        (_without_file, "entities.parquet: missing"),
        (_without_column, "relationships.parquet: missing column(s) weight"),
    ],
    ids=["missing folder", "missing file", "missing column"],
)
def test_bad_input_exits_2_naming_it_and_changes_nothing(index, tmp_path, damage, named):
    folder = damage(Path(shutil.copytree(GRAPHRAG_SAMPLE, tmp_path / "output")))
    pointer = read_pointer(index)
    before = {corpus: corpus_rows(index, corpus) for corpus in ("carol", "carol_again")}
    result = import_sample(folder, "carol", index)
    assert result.returncode == 2
    assert named in result.stderr and "Traceback" not in result.stderr
    assert read_pointer(index) == pointer
    after = {corpus: corpus_rows(index, corpus) for corpus in ("carol", "carol_again")}
    assert all(after[c][t].equals(before[c][t]) for c in before for t in CORPUS_TABLES)


@pytest.mark.parametrize(
    "frame, named",
    [
        (
            pl.DataFrame({"id": ["a"], "human_readable_id": ["zero"]}),
            "column human_readable_id is String, expected Int64",
        ),
        (
            pl.DataFrame({"id": ["a", "a"], "human_readable_id": [0, 1]}),
            "column id has 1 value(s) on more than one row",
        ),
    ],
    ids=["wrong type", "repeated id"],
)
def test_checked_table_names_the_column_at_fault(frame, named):
    documents = frame.with_columns(pl.lit("title").alias("title"), pl.lit("text").alias("text"))
    with pytest.raises(
        GraphragFormatError, match="^documents.parquet: " + named.replace("(", r"\(").replace(")", r"\)")
    ):
        checked_graphrag_table("documents", documents, "documents.parquet")
