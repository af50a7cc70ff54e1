"""Every setting is declared once (graphrag_assets/configuration.py): the README's table,
the settings classes, the stage fingerprints and every variable the code names agree with
that declaration."""

import os
import re
import typing

import pytest

from graphrag_assets.configuration import INDEX_SETTINGS, LLM_SETTINGS, QUERY, RUNTIME, SETTINGS, markdown_table
from graphrag_assets.fingerprints import STAGES, current_fingerprints
from graphrag_assets.llm.settings import LLMSettings
from graphrag_assets.settings import IndexSettings

from .conftest import REPO

TABLE_START = "<!-- settings table: generated from graphrag_assets/configuration.py"
TABLE_END = "<!-- end of settings table -->"
# Where a GRAPHRAG_ variable may be named: the code, its scripts and its documentation.
SCANNED = (
    "graphrag_assets/**/*.py",
    "graphrag_query/**/*.py",
    "graphrag_evaluation/**/*.py",
    "bench/**/*.py",
    "scripts/*",
    "*.md",
    "docs/*.md",
    "bench/*.md",
    "prompts/*.md",
    "notebooks/*.ipynb",
    "deploy/**/*.yaml",
)


@pytest.fixture
def unset_environment(monkeypatch):
    """No setting of the caller's environment reaches the test."""
    for variable in [name for name in os.environ if name.startswith(("GRAPHRAG_", "OPENAI_"))]:
        monkeypatch.delenv(variable)
    return monkeypatch


def test_readme_table_is_the_declared_one():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index(TABLE_START)
    table = readme[readme.index("\n", start) + 1 : readme.index(TABLE_END)].strip()
    assert table == markdown_table(), (
        "README.md's settings table differs from graphrag_assets/configuration.py: regenerate it with graphrag-index "
        "--show-settings --markdown"
    )


def test_every_variable_named_anywhere_is_declared_and_read_through_the_declaration():
    texts = {
        path: path.read_text(encoding="utf-8", errors="replace")
        for pattern in SCANNED
        for path in REPO.glob(pattern)
        if path.is_file()
    }
    # Python names that merely start with GRAPHRAG_ (GRAPHRAG_COLUMNS, a table layout).
    constants = {
        name
        for path, text in texts.items()
        if path.suffix == ".py"
        for name in re.findall(r"^\s*(GRAPHRAG_\w+)\s*(?::[^=\n]*)?=(?!=)", text, re.M)
    }
    named = {
        name: path.relative_to(REPO)
        for path, text in texts.items()
        for name in re.findall(r"GRAPHRAG_[A-Z0-9_]+", text)
        if not name.endswith("_")  # a family of variables (GRAPHRAG_LLM_*), not one
    }
    declared = {setting.variable for setting in SETTINGS}
    assert {name: str(path) for name, path in named.items() if name not in declared | constants} == {}
    direct_reads = [
        f"{path.relative_to(REPO)}: {read}"
        for path, text in texts.items()
        if path.suffix == ".py"
        and path.parts[len(REPO.parts)] in ("graphrag_assets", "graphrag_query", "graphrag_evaluation")
        for read in re.findall(r"(?:environ\.get\(|environ\[|getenv\()\s*[\"']GRAPHRAG_\w+", text)
    ]
    assert direct_reads == [], (
        "read GRAPHRAG_ variables with configuration.value_of, so their type, default and errors are the declared ones"
    )


def test_declaration_is_well_formed():
    variables = [setting.variable for setting in SETTINGS]
    assert len(variables) == len(set(variables))
    for setting in SETTINGS:
        assert setting.variable.startswith("GRAPHRAG_") and setting.description and "|" not in setting.description
        assert setting.kind in (str, int, float, bool)
        assert setting.stages and set(setting.stages) <= {*STAGES, QUERY, RUNTIME}, setting.variable


@pytest.mark.parametrize("settings_class, declared", [(IndexSettings, INDEX_SETTINGS), (LLMSettings, LLM_SETTINGS)])
def test_settings_classes_load_exactly_the_declared_fields(settings_class, declared):
    fields = settings_class.model_fields
    assert {setting.field for setting in declared} == set(fields) - {
        "model_prices"
    }  # model_prices: from GRAPHRAG_LLM_PRICES' file
    for setting in declared:
        field = fields[setting.field]
        assert field.default == setting.default, setting.variable
        annotation = field.annotation
        assert annotation is setting.kind or setting.kind in typing.get_args(annotation) or setting.secret, (
            setting.variable
        )


def _changed(setting, current):
    """A valid value of the setting other than ``current``."""
    if setting.kind is bool:
        return "false" if current else "true"
    if setting.kind in (int, float):
        return str((current or 0) + 1)
    return f"{current or ''}changed"


def test_each_stage_fingerprint_hashes_exactly_the_settings_declared_for_it(unset_environment, tmp_path):
    """A setting declared for a stage changes that stage's fingerprint, offline or with an
    LLM, and no other stage's; an undeclared one changes none."""
    prices = tmp_path / "prices.csv"
    prices.write_text("model,input_per_million,output_per_million\nchat,1,2\n")
    choices = {
        "GRAPHRAG_CHUNKING_MODE": "sentences",
        "GRAPHRAG_EMBEDDER": "minilm",
        "GRAPHRAG_LLM_MODE": "json",
        "GRAPHRAG_LLM_PRICES": str(prices),
    }
    offline = {}
    with_llm = {
        "GRAPHRAG_LLM_MODEL": "chat",
        "GRAPHRAG_LLM_BASE_URL": "http://127.0.0.1:9/v1",
        "GRAPHRAG_EMBEDDING_MODEL": "embed",
        "GRAPHRAG_LLM_CLAIMS": "true",
    }

    def fingerprints(environ):
        with unset_environment.context() as patch:
            for variable, value in environ.items():
                patch.setenv(variable, value)
            return current_fingerprints(IndexSettings.from_env())

    baselines = {"offline": offline, "with an LLM": with_llm}
    before = {name: fingerprints(environ) for name, environ in baselines.items()}
    for setting in INDEX_SETTINGS + LLM_SETTINGS:
        changed_stages = set()
        for name, environ in baselines.items():
            current = environ.get(setting.variable, setting.default)
            current = current == "true" if setting.kind is bool and isinstance(current, str) else current
            value = choices.get(setting.variable) or _changed(setting, current)
            after = fingerprints(environ | {setting.variable: value})
            changed_stages |= {stage for stage in STAGES if after[stage] != before[name][stage]}
        assert changed_stages == set(setting.stages) & set(STAGES), setting.variable


def test_fingerprints_of_existing_indexes_are_unchanged(unset_environment):
    """What the fingerprints hash stays what indexes recorded, or an upgrade would redo
    every index (offline: LLM fingerprints also hash the prompt files)."""
    recorded = {
        "reading": "v1/84dc02947872837e",
        "chunking": "v4/467a5dba7490c009",
        "extraction": "v5/572efcd8ade4dd52",  # offline rules 6 (OFFLINE_EXTRACTION_RULES)
        "graph": "v5/8121cd01ec51bf96",
        "clustering": "v1/8b31b465e7cee29e",
        "reports": "v3/a52e94e1e72df895",
        "embeddings": "v1/e4ac4e4a2977c80e",
    }
    assert {
        stage: str(fingerprint) for stage, fingerprint in current_fingerprints(IndexSettings.from_env()).items()
    } == recorded


def test_a_bad_value_is_named_with_its_variable():
    with pytest.raises(ValueError, match=r"GRAPHRAG_LLM_CONCURRENCY='lots' is not a valid int"):
        LLMSettings.from_env({"GRAPHRAG_LLM_CONCURRENCY": "lots"})
    with pytest.raises(ValueError, match=r"GRAPHRAG_ENTITY_RESOLUTION='maybe' is not a valid bool"):
        IndexSettings.from_env({"GRAPHRAG_ENTITY_RESOLUTION": "maybe"})
    assert (
        IndexSettings.from_env({"GRAPHRAG_LEIDEN_SEED": "0x10", "GRAPHRAG_ENTITY_RESOLUTION": "off"}).leiden_seed == 16
    )
    assert LLMSettings.from_env({"OPENAI_API_KEY": "sk-fallback"}).api_key.get_secret_value() == "sk-fallback"
    assert (
        LLMSettings.from_env(
            {"OPENAI_API_KEY": "sk-fallback", "GRAPHRAG_LLM_API_KEY": "sk-own"}
        ).api_key.get_secret_value()
        == "sk-own"
    )


def test_show_settings_prints_values_and_sources_with_keys_redacted_and_indexes_nothing(
    unset_environment, tmp_path, capsys
):
    from graphrag_evaluation.cli import main

    unset_environment.setenv("GRAPHRAG_CHUNK_SIZE", "600")
    unset_environment.setenv("OPENAI_API_KEY", "sk-very-secret")
    database = tmp_path / "index.duckdb"
    assert main(["--show-settings", "--db", str(database)]) == 0
    lines = {line.split()[0]: line.split(maxsplit=1)[1] for line in capsys.readouterr().out.splitlines()}
    assert set(lines) == {setting.variable for setting in SETTINGS}
    assert lines["GRAPHRAG_CHUNK_SIZE"].split() == ["environment", "600"]
    assert lines["GRAPHRAG_DB"].split() == ["command", "line", str(database)]
    assert lines["GRAPHRAG_CHUNK_OVERLAP"].split() == ["default", "100"]
    assert lines["GRAPHRAG_LLM_API_KEY"].split() == ["environment", "(OPENAI_API_KEY)", "<redacted>"]
    assert "sk-very-secret" not in str(lines) and not database.exists()

    assert main(["--show-settings", "--markdown"]) == 0
    assert capsys.readouterr().out.strip() == markdown_table()


MODEL = {"GRAPHRAG_LLM_MODEL": "chat", "GRAPHRAG_LLM_BASE_URL": "http://127.0.0.1:9/v1"}
CONFIGURATIONS = {
    "model": MODEL,
    "model with claims": MODEL | {"GRAPHRAG_LLM_CLAIMS": "true"},
    "model with unconfirmed merges": MODEL | {"GRAPHRAG_LLM_CONFIRM_MERGES": "false"},
    "model with model embeddings": MODEL | {"GRAPHRAG_EMBEDDING_MODEL": "embed"},
    "offline with model embeddings": {
        "GRAPHRAG_EMBEDDING_MODEL": "embed",
        "GRAPHRAG_EMBEDDING_BASE_URL": "http://127.0.0.1:9/v1",
    },
}
# These hashes pin compatibility with existing indexes: each is what an index built under
# that configuration recorded (offline, the test above pins them), so a change here makes
# every such index rebuild. With a model, the extraction, graph and reports hashes include
# the prompt files' versions: a prompt edit changes them on purpose (and updates them here),
# as a new version of the offline extraction rules changes the offline extraction hash.
# The fingerprints of the stages no method choice reads:
RECORDED_WHATEVER_THE_METHODS = {
    "reading": "v1/84dc02947872837e",
    "chunking": "v4/467a5dba7490c009",
    "clustering": "v1/8b31b465e7cee29e",
}
# The extraction, graph, reports and embeddings fingerprints of each configuration:
RECORDED_BY_CONFIGURATION = {
    "model": "v5/e4ff6f1ef3e4a9f6 v5/04c0557d18a88a52 v3/5e1a442c9e5268df v1/e4ac4e4a2977c80e",
    "model with claims": "v5/9df3f698cb2abfd8 v5/04c0557d18a88a52 v3/5e1a442c9e5268df v1/e4ac4e4a2977c80e",
    "model with unconfirmed merges": "v5/e4ff6f1ef3e4a9f6 v5/0167c0ec05727089 v3/5e1a442c9e5268df v1/e4ac4e4a2977c80e",
    "model with model embeddings": "v5/e4ff6f1ef3e4a9f6 v5/04c0557d18a88a52 v3/5e1a442c9e5268df v1/abcb1db043f171f1",
    "offline with model embeddings": "v5/572efcd8ade4dd52 v5/8121cd01ec51bf96 v3/a52e94e1e72df895 v1/abcb1db043f171f1",
}


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
def test_fingerprints_of_each_configuration_are_unchanged(unset_environment, configuration):
    for variable, value in CONFIGURATIONS[configuration].items():
        unset_environment.setenv(variable, value)
    method_stages = ("extraction", "graph", "reports", "embeddings")
    recorded = RECORDED_WHATEVER_THE_METHODS | dict(
        zip(method_stages, RECORDED_BY_CONFIGURATION[configuration].split())
    )
    now = current_fingerprints(IndexSettings.from_env())
    assert {stage: str(now[stage]) for stage in STAGES} == recorded
