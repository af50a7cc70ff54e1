"""The stages of a build run without Dagster (graphrag_assets/stages/), and the choice
between the model and the offline methods is made once, where the methods bundle is built."""

import logging
import re

from graphrag_assets.build_state import corpus_work, failed_llm_calls, last_build
from graphrag_assets.llm.settings import LLMSettings
from graphrag_assets.stages.build import build_corpus
from graphrag_assets.stages.methods import methods_for, plain_sessions

from .conftest import REPO
from .index_equality import assert_same_index, table

# Branches on "is there a model?" in the shell or the stages: the methods bundle decides it once.
MODEL_BRANCHES = [
    re.compile(r"\bif\b[^#\n]*\buse_llm\b"),
    re.compile(r"\bif (not )?llm\s*:"),
    re.compile(r"\bif (not )?(llm|llm_settings|endpoint)\.enabled\b"),
    re.compile(r"\bllm is (not )?None\b"),
]
LOG = logging.getLogger("stages")
THE_ONE_CHOICE = ("graphrag_assets/stages/methods.py", "    if not llm.enabled:")


def test_no_model_or_offline_branch_is_left_in_the_assets_or_the_stages():
    found = [
        (str(path.relative_to(REPO)), line)
        for folder in ("graphrag_assets/defs", "graphrag_assets/stages")
        for path in sorted((REPO / folder).rglob("*.py"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if any(pattern.search(line) for pattern in MODEL_BRANCHES)
    ]
    assert found == [THE_ONE_CHOICE], found


def test_a_build_by_the_stages_alone_equals_the_asset_graphs(index, input_dir, settings_for, tmp_path):
    dagster_built, _ = index(input_dir)
    alone = settings_for(input_dir, db=str(tmp_path / "alone.duckdb"), vectors=str(tmp_path / "alone_lance"))
    endpoint = LLMSettings.from_env()
    methods = methods_for(alone, endpoint, plain_sessions(endpoint))
    build_corpus(alone, methods, endpoint, "default", LOG)

    assert_same_index(dagster_built.location(), alone.location())
    for name in ("documents", "sources", "extracted_entities", "extracted_relationships", "entity_merges"):
        columns = "* EXCLUDE (indexed_at)" if name == "sources" else "*"
        sql = f"SELECT {columns} FROM {name} ORDER BY ALL"
        assert table(alone.location(), sql).equals(table(dagster_built.location(), sql)), name
    # Done as the asset graph's build is: recorded with every stage's fingerprint, mirrored, published.
    with alone.store() as store:
        assert corpus_work(store, alone, {"default"}) == {}
        assert last_build(store, "default")["stage_fingerprints"] == last_build_of(dagster_built)["stage_fingerprints"]


def last_build_of(settings) -> dict:
    with settings.store() as store:
        return last_build(store, "default")


def test_failed_calls_recorded_by_an_older_index_are_read_as_columns_and_retried(input_dir, settings_for):
    settings = settings_for(input_dir)
    endpoint = LLMSettings.from_env()
    build_corpus(settings, methods_for(settings, endpoint, plain_sessions(endpoint)), endpoint, "default", LOG)
    # An index of before the corpus and source_partition columns: the scope said it all.
    with settings.store() as store:
        store.open_connection.execute("ALTER TABLE llm_failures DROP COLUMN corpus")
        store.open_connection.execute("ALTER TABLE llm_failures DROP COLUMN source_partition")
        store.open_connection.execute(
            "INSERT INTO llm_failures VALUES ('default#summary', 'summary', 'e1', 'HTTP 500', now()), "
            "('default/calder_shipping.txt', 'extraction', 'u1', 'HTTP 500', now())"
        )
    with settings.store() as store:
        store.ensure_schema()
        rows = store.read("SELECT scope, corpus, source_partition FROM llm_failures ORDER BY scope").rows()
        assert rows == [
            ("default#summary", "default", None),
            ("default/calder_shipping.txt", "default", "default/calder_shipping.txt"),
        ]
        assert failed_llm_calls(store, {"default"}) == {"extraction": 1, "summary": 1}
        assert failed_llm_calls(store, {"other"}) == {}
        assert corpus_work(store, settings, {"default"})["default"].reason == "retrying 1 failed summary/report call(s)"
