"""A document of names alone (a list, a dump of identifiers) relates every name of a text
unit to every other: offline extraction stops adding a document's text units to the graph
once their co-occurrence pairs would pass GRAPHRAG_MAX_DOCUMENT_PAIRS. The document stays
chunked and searchable, it is named in the run's log, the extractions' metadata, the
report of ``graphrag-index`` and ``document_wrapping`` (kind ``graph_limit``), and the
other documents are extracted as if they were alone."""

import random
import shutil
import string
import time

import polars as pl
import pytest
from dagster import AssetKey

from graphrag_assets.configuration import default_of
from graphrag_assets.core.chunking import chunk_documents
from graphrag_assets.core.content import GRAPH_LIMIT
from graphrag_assets.core.extraction.offline import (
    ExtractionSettings,
    document_pairs,
    graph_limit_rows,
    offline_records,
)
from graphrag_assets.settings import IndexSettings

from .conftest import REPO, shared_path

NORMAL = REPO / "sample_corpus" / "default" / "river_cleanup.txt"


def name_list(characters: int, seed: int = 7) -> str:
    """Lines of capitalised made-up words separated by commas, drawn from a vocabulary of
    20,000 (so that most recur, as names of a register do), ``characters`` long or a little more."""
    rng = random.Random(seed)
    vocabulary = [
        rng.choice(string.ascii_uppercase) + "".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 8)))
        for _ in range(20_000)
    ]
    lines, size = [], 0
    while size < characters:
        lines.append(", ".join(rng.choices(vocabulary, k=12)) + ".")
        size += len(lines[-1]) + 1
    return "\n".join(lines) + "\n"


def _documents(texts: dict[str, str]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "id": list(texts),
            "title": [f"{name}.txt" for name in texts],
            "text": list(texts.values()),
            "corpus": "c",
            "source_partition": [f"c/{name}.txt" for name in texts],
            "source_path": [f"{name}.txt" for name in texts],
        }
    )


@pytest.fixture(scope="module")
def documents() -> pl.DataFrame:
    return _documents({"names": name_list(60_000), "river": NORMAL.read_text(encoding="utf-8")})


@pytest.fixture(scope="module")
def units(documents) -> pl.DataFrame:
    return chunk_documents(documents)


LIMIT = ExtractionSettings(max_document_pairs=50_000)


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.sort(frame.columns)


def test_a_document_of_names_is_cut_where_its_next_unit_would_pass_the_limit(units):
    records = offline_records(units, settings=LIMIT)
    assert records.cut["document_id"].to_list() == ["names"]
    cut = records.cut.row(0, named=True)
    names = units.filter(pl.col("document_id") == "names").sort("chunk_index")
    assert 0 < cut["units_in_graph"] < cut["units"] == names.height
    # What is in the graph is the document's beginning, within the limit ...
    kept, left_out = names.head(cut["units_in_graph"]), names.slice(cut["units_in_graph"])
    in_graph = set(records.entities.filter(pl.col("source_partition") == "c/names.txt")["text_unit_id"])
    assert in_graph == set(kept["id"]) and not in_graph & set(left_out["id"])
    assert cut["first_unit_left_out"] == left_out["id"][0]
    of_names = records.entities.filter(pl.col("source_partition") == "c/names.txt")
    pairs = sum(document_pairs(n) for n in of_names.group_by("text_unit_id").len()["len"])
    assert pairs == cut["pairs_in_graph"] <= LIMIT.max_document_pairs
    # ... up to the unit that would pass it.
    whole = offline_records(names, settings=ExtractionSettings(max_document_pairs=10**15))
    next_names = whole.entities.filter(pl.col("text_unit_id") == cut["first_unit_left_out"]).height
    assert cut["pairs_in_graph"] + document_pairs(next_names) > LIMIT.max_document_pairs
    # The other document's records are those it has alone.
    river = units.filter(pl.col("document_id") == "river")
    alone = offline_records(river, settings=LIMIT)
    assert alone.cut.is_empty()
    for name in ("entities", "relationships"):
        found = getattr(records, name).filter(pl.col("text_unit_id").is_in(river["id"].implode()))
        assert _sorted(found).equals(_sorted(getattr(alone, name))), name


def test_units_given_out_of_order_are_cut_at_the_end_of_their_document(units):
    in_order = offline_records(units, settings=LIMIT)
    shuffled = units.sample(fraction=1.0, shuffle=True, seed=3)
    records = offline_records(shuffled, settings=LIMIT)
    assert records.cut.equals(in_order.cut)
    assert _sorted(records.entities).equals(_sorted(in_order.entities))
    # The records keep the order of the units given.
    given = [unit for unit in shuffled["id"] if unit in set(records.entities["text_unit_id"])]
    assert records.entities["text_unit_id"].unique(maintain_order=True).to_list() == given


def test_the_row_of_a_cut_document_starts_at_its_first_unit_left_out(documents, units):
    records = offline_records(units, settings=LIMIT)
    rows = graph_limit_rows(records.cut, documents, units)
    assert rows.select("document_id", "source_partition", "kind").rows() == [("names", "c/names.txt", GRAPH_LIMIT)]
    row = rows.row(0, named=True)
    text = documents.filter(pl.col("id") == "names")["text"][0]
    first_left_out = units.filter(pl.col("id") == records.cut["first_unit_left_out"][0])["text"][0]
    assert text[row["start"] :].startswith(first_left_out[:60]) and row["start"] > 0
    assert (row["end"], row["characters"]) == (len(text), len(text) - row["start"])
    assert row["excerpt"] == " ".join(first_left_out.split())[:120]
    assert graph_limit_rows(records.cut.clear(), documents, units).is_empty()


def test_the_default_leaves_a_novel_whole():
    book = shared_path("corpus", "christmas_carol", "book.txt").read_text(encoding="utf-8")
    units = chunk_documents(_documents({"carol": book}))
    records = offline_records(units)
    unbounded = offline_records(units, settings=ExtractionSettings(max_document_pairs=10**15))
    assert records.cut.is_empty()
    assert records.entities.equals(unbounded.entities) and records.relationships.equals(unbounded.relationships)


def test_the_limit_is_checked_naming_its_variable():
    with pytest.raises(ValueError, match=r"GRAPHRAG_MAX_DOCUMENT_PAIRS=0 is out of range"):
        ExtractionSettings(max_document_pairs=0)
    with pytest.raises(ValueError, match=r"GRAPHRAG_MAX_DOCUMENT_PAIRS=0 is out of range"):
        IndexSettings.from_env({"GRAPHRAG_MAX_DOCUMENT_PAIRS": "0"})
    assert IndexSettings.from_env({"GRAPHRAG_MAX_DOCUMENT_PAIRS": "1000"}).extraction().max_document_pairs == 1000


def _table(settings, sql: str) -> pl.DataFrame:
    with settings.location().connect(read_only=True) as connection:
        return connection.execute(sql).pl()


def test_a_megabyte_of_names_beside_a_report_is_indexed_in_reasonable_time(index, instance, tmp_path):
    """The real pipeline, default settings: 1.2 MB of names used to keep Leiden busy for
    many minutes; now the build ends in well under two minutes, the document is named, and
    the report beside it is extracted as if alone."""
    mixed = tmp_path / "mixed" / "default"
    mixed.mkdir(parents=True)
    (mixed / "names.txt").write_text(name_list(1_200_000), encoding="utf-8")
    shutil.copy(NORMAL, mixed / NORMAL.name)
    started = time.perf_counter()
    settings, report = index(mixed.parent)
    seconds = time.perf_counter() - started
    assert not report.failed_runs and report.source_errors == []
    assert seconds < 120, f"{seconds:.0f} s"

    # Named in the report graphrag-index prints, in document_wrapping, in the run's log and
    # in the extractions' metadata.
    assert len(report.documents_cut) == 1 and report.documents_cut[0].startswith("default/names.txt: names.txt: ")
    assert "GRAPHRAG_MAX_DOCUMENT_PAIRS" in report.documents_cut[0]
    rows = _table(settings, "SELECT source_partition, kind, characters FROM document_wrapping")
    assert rows.select("source_partition", "kind").rows() == [("default/names.txt", GRAPH_LIMIT)]
    warnings = [
        entry.user_message
        for run in report.graph_runs
        for entry in instance.all_logs(run)
        if "was cut" in (entry.user_message or "")
    ]
    assert len(warnings) == 1 and warnings[0].startswith("document default/names.txt: names.txt was cut")
    assert f"GRAPHRAG_MAX_DOCUMENT_PAIRS={default_of('GRAPHRAG_MAX_DOCUMENT_PAIRS')}" in warnings[0]
    metadata = instance.get_latest_materialization_event(AssetKey("extractions")).asset_materialization.metadata
    assert list(metadata["documents_cut_at_graph_limit"].value) == ["default/names.txt: names.txt"]

    # All of the document is chunked and searchable; its graph is its beginning.
    last_line = (mixed / "names.txt").read_text(encoding="utf-8").splitlines()[-1]
    units = _table(settings, "SELECT id, text FROM text_units WHERE source_partition = 'default/names.txt'")
    assert any(last_line in text for text in units["text"])
    in_graph = _table(
        settings,
        "SELECT count(DISTINCT text_unit_id) AS n FROM extracted_entities WHERE source_partition = 'default/names.txt'",
    )["n"][0]
    assert 0 < in_graph < units.height

    # The report's records and entities are those it has when indexed alone.
    alone_dir = tmp_path / "alone" / "default"
    alone_dir.mkdir(parents=True)
    shutil.copy(NORMAL, alone_dir / NORMAL.name)
    alone, _ = index(alone_dir.parent, db=str(tmp_path / "alone.duckdb"), vectors=str(tmp_path / "alone_lance"))
    river = "WHERE source_partition = 'default/river_cleanup.txt' ORDER BY ALL"
    for name in ("extracted_entities", "extracted_relationships"):
        assert _table(settings, f"SELECT * FROM {name} {river}").equals(_table(alone, f"SELECT * FROM {name} {river}"))
    its_entities = "SELECT title, type FROM entities WHERE list_has_all(?, text_unit_ids) ORDER BY ALL"
    river_units = _table(alone, "SELECT id FROM text_units")["id"].to_list()
    with settings.location().connect(read_only=True) as connection:
        mixed_entities = connection.execute(its_entities, [river_units]).pl()
    with alone.location().connect(read_only=True) as connection:
        alone_entities = connection.execute(its_entities, [river_units]).pl()
    assert not alone_entities.is_empty() and mixed_entities.equals(alone_entities)


def test_a_new_limit_re_extracts_and_replaces_only_the_cut_rows(index, tmp_path):
    """Another limit changes the extraction's fingerprint: every source is extracted again
    (not chunked again), its graph_limit row moves, and the text left out as not content
    (a Gutenberg book's header and licence) keeps its rows."""
    corpus = tmp_path / "input" / "default"
    corpus.mkdir(parents=True)
    (corpus / "names.txt").write_text(name_list(200_000), encoding="utf-8")
    shutil.copy(shared_path("corpus", "christmas_carol", "book.txt"), corpus / "book.txt")
    rows = "SELECT source_partition, kind, start FROM document_wrapping ORDER BY ALL"
    settings, _ = index(corpus.parent, max_document_pairs=50_000)
    first = _table(settings, rows)
    settings, report = index(corpus.parent, max_document_pairs=100_000)
    second = _table(settings, rows)
    assert not report.failed_runs and len(report.documents_cut) == 1
    content = pl.col("kind") != GRAPH_LIMIT
    assert not first.filter(content).is_empty() and second.filter(content).equals(first.filter(content))
    cut_at = [frame.filter(~content).select("source_partition", "start").rows() for frame in (first, second)]
    assert [[source for source, _ in rows] for rows in cut_at] == [["default/names.txt"]] * 2
    assert cut_at[0][0][1] < cut_at[1][0][1]
