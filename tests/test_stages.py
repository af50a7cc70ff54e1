"""The stages of a build run without Dagster (graphrag_assets/stages/), and the choice
between the model and the offline methods is made once, where the methods bundle is built."""

import logging
import re

from graphrag_assets.build_state import corpus_work, last_build
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
    alone = settings_for(input_dir, database=str(tmp_path / "alone.duckdb"), vectors=str(tmp_path / "alone_lance"))
    endpoint = LLMSettings.from_env()
    methods = methods_for(alone, endpoint, plain_sessions(endpoint))
    build_corpus(alone, methods, endpoint, "default", logging.getLogger("stages"))

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
