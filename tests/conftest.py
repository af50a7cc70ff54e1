"""Shared fixtures: real files, a real DuckDB file, a real Dagster instance in a
temporary DAGSTER_HOME."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SAMPLE_CORPUS = REPO / "sample_corpus"
SHARED = REPO.parent / "shared"
# The API key tests give the LLM path; it must never be written anywhere.
FAKE_LLM_KEY = "sk-test-NEVER-WRITE-ME-9f8e7d"
# (asset, check) of every check an offline index runs
OFFLINE_CHECKS = [
    ("documents", "sources_readable"),
    ("text_units", "text_units_belong_to_documents"),
    ("relationships", "endpoints_are_entities"),
    ("communities", "members_exist"),
    ("community_reports", "every_community_has_a_report"),
    ("embeddings", "vector_dimensions_consistent"),
    ("evaluations", "answers_did_not_regress"),
]


def pytest_configure(config):
    from dagster import BetaWarning, PreviewWarning

    warnings.filterwarnings("ignore", category=BetaWarning)
    warnings.filterwarnings("ignore", category=PreviewWarning)


@pytest.fixture
def fake_llm(monkeypatch):
    """The OpenAI-compatible test server on 127.0.0.1, configured as the index's LLM and
    embedding endpoint."""
    from .fake_openai import FakeOpenAI

    with FakeOpenAI() as fake:
        monkeypatch.setenv("GRAPHRAG_LLM_BASE_URL", fake.base_url)
        monkeypatch.setenv("GRAPHRAG_LLM_API_KEY", FAKE_LLM_KEY)
        monkeypatch.setenv("GRAPHRAG_LLM_MODEL", "fake-chat")
        monkeypatch.setenv("GRAPHRAG_EMBEDDING_MODEL", "fake-embed")
        yield fake


@pytest.fixture
def dagster_home(tmp_path, monkeypatch) -> Path:
    """A fresh DAGSTER_HOME with the repo's instance settings (pools, telemetry off)."""
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(REPO / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    return home


@pytest.fixture
def instance(dagster_home):
    from dagster import DagsterInstance

    with DagsterInstance.get() as instance:
        yield instance


@pytest.fixture
def input_dir(tmp_path) -> Path:
    """A writable copy of the sample corpus (tests edit and delete files in it)."""
    target = tmp_path / "input"
    shutil.copytree(SAMPLE_CORPUS, target)
    return target


# Runs a test on both backends of the index: the DuckDB file, and a DuckLake (its catalog a
# DuckDB file beside the database path, its data files in a folder), through settings_for.
BOTH_BACKENDS = pytest.mark.parametrize("index_backend", ["duckdb", "ducklake"], indirect=True)


@pytest.fixture
def index_backend(request) -> str:
    """The backend ``settings_for`` builds indexes on: the DuckDB file unless the test is
    marked with BOTH_BACKENDS."""
    return getattr(request, "param", "duckdb")


def backend_settings(backend: str, database: str) -> dict[str, str]:
    """The settings that put the index at ``database`` on ``backend``."""
    return {"ducklake_catalog": str(Path(database).with_suffix(".ducklake"))} if backend == "ducklake" else {}


@pytest.fixture
def settings_for(tmp_path, index_backend):
    from graphrag_assets.settings import IndexSettings

    def make(input_dir: Path, **overrides) -> IndexSettings:
        # Built fresh each time: Dagster resources must not be derived with model_copy,
        # which changes the fields but not the config Dagster initialises them from.
        values = {
            "db": str(tmp_path / "index" / "graphrag.duckdb"),
            "vectors": str(tmp_path / "index" / "lancedb"),
        } | overrides
        values = backend_settings(index_backend, values["db"]) | values
        return IndexSettings.from_env({}, input_dir=str(input_dir), **values)

    return make


@pytest.fixture
def index(instance, settings_for):
    """Run one indexing pass (the same code as graphrag-index) and return its report."""
    from graphrag_assets.indexing import run_index
    from graphrag_evaluation.build import build_definitions

    def run(input_dir: Path, **overrides):
        settings = settings_for(input_dir, **overrides)
        return settings, run_index(settings, instance, lambda: build_definitions(settings), log=lambda message: None)

    return run


@pytest.fixture(scope="module")
def postgres():
    """A PostgreSQL 15 server in a temporary folder, for the tests of one module."""
    from .postgres import PostgresServer, missing_binaries

    if missing_binaries():
        pytest.skip(f"PostgreSQL server binaries not on PATH: {', '.join(missing_binaries())}")
    server = PostgresServer().start()
    yield server
    server.stop()


def shared_path(*parts: str) -> Path:
    path = SHARED.joinpath(*parts)
    assert path.exists(), f"{path} is missing: tests expect ../shared beside the checkout (see README)"
    return path


@pytest.fixture(scope="session")
def sample_index(tmp_path_factory):
    """The sample corpus indexed once by the real asset graph; returns its settings."""
    from dagster import DagsterInstance

    from graphrag_assets.indexing import run_index
    from graphrag_assets.settings import IndexSettings
    from graphrag_evaluation.build import build_definitions

    root = tmp_path_factory.mktemp("sample_index")
    home = root / "dagster_home"
    home.mkdir()
    shutil.copy(REPO / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    settings = IndexSettings.from_env(
        {}, input_dir=str(SAMPLE_CORPUS), db=str(root / "graphrag.duckdb"), vectors=str(root / "lancedb")
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DAGSTER_HOME", str(home))
        with DagsterInstance.get() as instance:
            report = run_index(settings, instance, lambda: build_definitions(settings), log=lambda message: None)
    assert not report.failed_runs and not report.source_errors
    return settings
