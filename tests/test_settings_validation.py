"""One name per knob, from the variable to the function argument, and every value checked
against its declaration (graphrag_assets/configuration.py) before anything runs."""

import dataclasses
import hashlib
import inspect
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphrag_assets.configuration import INDEX_SETTINGS, LLM_SETTINGS, SETTINGS, checked
from graphrag_assets.core.embedding import make_embedder
from graphrag_assets.fingerprints import STAGES
from graphrag_assets.llm.rate_limit import RateLimiter
from graphrag_assets.llm.settings import LLMSettings
from graphrag_assets.settings import IndexSettings
from graphrag_assets.storage.location import index_location

from .conftest import REPO

# The prefix each group's variables carry before the field's own name.
PREFIXES = {"index": ("GRAPHRAG_",), "llm": ("GRAPHRAG_LLM_", "GRAPHRAG_")}
NUMERIC = [setting for setting in SETTINGS if setting.kind in (int, float)]
WITH_CHOICES = [setting for setting in SETTINGS if setting.choices]
INDEX_FIELDS = {setting.field for setting in INDEX_SETTINGS}


def _name_after_prefix(variable: str, prefixes: tuple[str, ...]) -> str:
    prefix = next(prefix for prefix in prefixes if variable.startswith(prefix))
    return variable.removeprefix(prefix).lower()


@pytest.mark.parametrize("group, declared", [("index", INDEX_SETTINGS), ("llm", LLM_SETTINGS)])
def test_each_field_is_named_as_its_variable(group, declared):
    misnamed = {
        setting.variable: setting.field
        for setting in declared
        if setting.field != _name_after_prefix(setting.variable, PREFIXES[group])
    }
    assert not misnamed, f"a field must be its variable's lower-cased suffix: {misnamed}"


def _distinct_valid_environment() -> dict[str, str]:
    """Every index setting a valid value other than its default, no two numbers alike (so a
    value handed to the wrong argument shows)."""
    environment = {}
    for position, setting in enumerate(INDEX_SETTINGS):
        if setting.kind is bool:
            value = str(not setting.default).lower()
        elif setting.kind in (int, float):
            # Falling with the position: GRAPHRAG_CHUNK_OVERLAP comes after GRAPHRAG_CHUNK_SIZE.
            value = str(setting.kind(100 - position))
        elif setting.variable == "GRAPHRAG_EMBEDDER":
            continue  # the other embedder loads a model; its argument is checked by name below
        elif setting.choices:
            value = next(choice for choice in setting.choices if choice != setting.default)
        else:
            value = f"value-{position}"
        environment[setting.variable] = value
    numbers = [value for value in environment.values() if value[0].isdigit()]
    assert len(numbers) == len(set(numbers))
    return environment


def _core_settings(settings: IndexSettings) -> tuple:
    """The core stages' settings, converted from the index settings."""
    return settings.chunking(), settings.extraction(), settings.graph(), settings.communities(), settings.resolution()


def test_the_core_receives_each_setting_by_its_own_name_and_value():
    """The conversions to the core's settings are by keyword: each argument named as a field
    gets that field's value, and every setting a stage reads reaches the core by name."""
    settings = IndexSettings.from_env(_distinct_valid_environment())
    received = set()
    for converted in (*_core_settings(settings), settings.table_columns()):
        for field in dataclasses.fields(converted):
            if field.name in INDEX_FIELDS:
                assert getattr(converted, field.name) == getattr(settings, field.name), field.name
                received.add(field.name)
    assert settings.make_embedder().dimensions == settings.embedding_dimensions
    received |= set(inspect.signature(make_embedder).parameters)
    read_by_stages = {setting.field for setting in INDEX_SETTINGS if set(setting.stages) & set(STAGES)}
    assert read_by_stages <= received, f"settings that reach no core argument by name: {read_by_stages - received}"
    assert set(inspect.signature(index_location).parameters) <= INDEX_FIELDS
    assert set(inspect.signature(RateLimiter).parameters) <= {setting.field for setting in LLM_SETTINGS}


def test_a_core_default_is_the_declared_one():
    """The core's settings default to the declaration, so a default is written once."""
    settings = IndexSettings.from_env({})
    for converted in _core_settings(settings):
        for field in dataclasses.fields(converted):
            if field.name in INDEX_FIELDS:
                declared = next(setting for setting in INDEX_SETTINGS if setting.field == field.name)
                assert field.default == declared.default, field.name
    default_dimensions = inspect.signature(make_embedder).parameters["embedding_dimensions"].default
    assert default_dimensions == IndexSettings().embedding_dimensions


def test_every_numeric_setting_declares_its_range_and_its_default_is_in_it():
    for setting in NUMERIC:
        assert setting.minimum is not None and setting.maximum is not None, setting.variable
        assert setting.minimum <= setting.default <= setting.maximum, setting.variable
    for setting in WITH_CHOICES:
        assert setting.kind is str and setting.default in setting.choices, setting.variable
    assert {setting.variable for setting in WITH_CHOICES} >= {
        "GRAPHRAG_CHUNKING_MODE",
        "GRAPHRAG_EMBEDDER",
        "GRAPHRAG_LLM_MODE",
    }


def _loader(setting):
    if setting in INDEX_SETTINGS:
        return IndexSettings.from_env
    if setting in LLM_SETTINGS:
        return LLMSettings.from_env
    return lambda environment: checked(setting, setting.kind(environment[setting.variable]))


def _out_of_range(setting) -> list[str]:
    below = setting.minimum - 1 if setting.kind is int else setting.minimum - 0.5
    above = setting.maximum + 1 if setting.kind is int else setting.maximum * 2 + 1
    return [str(below), str(above)] + (["nan"] if setting.kind is float else [])


@pytest.mark.parametrize("setting", NUMERIC, ids=lambda setting: setting.variable)
def test_a_value_out_of_range_is_refused_naming_its_variable(setting):
    for raw in _out_of_range(setting):
        with pytest.raises(ValueError, match=rf"{setting.variable}=.* is out of range"):
            _loader(setting)({setting.variable: raw})
    for raw in (setting.minimum, setting.maximum):
        assert math.isclose(checked(setting, setting.kind(raw)), raw)


@pytest.mark.parametrize("setting", WITH_CHOICES, ids=lambda setting: setting.variable)
def test_a_value_not_among_the_choices_is_refused_naming_its_variable(setting):
    with pytest.raises(ValueError, match=rf"{setting.variable}='nonsense' is not one of: {', '.join(setting.choices)}"):
        _loader(setting)({setting.variable: "nonsense"})


def test_settings_given_in_code_or_by_dagster_config_are_checked_too():
    """The Dagster resources are pydantic models: a bad field is refused when one is built,
    not inside a step."""
    with pytest.raises(ValueError, match="GRAPHRAG_EMBEDDING_DIMENSIONS=0 is out of range"):
        IndexSettings(embedding_dimensions=0)
    with pytest.raises(ValueError, match="GRAPHRAG_CHUNKING_MODE='pages' is not one of"):
        IndexSettings(chunking_mode="pages")
    with pytest.raises(ValueError, match="GRAPHRAG_LLM_CONCURRENCY=0 is out of range"):
        LLMSettings(concurrency=0)
    with pytest.raises(ValueError, match="GRAPHRAG_SHARDS=0 is out of range"):
        IndexSettings.from_env({}, shards=0)


def _files_of(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


# The bad values a fault campaign found accepted, each then failing late (or never).
BAD_SETTINGS = [
    ("GRAPHRAG_LLM_CONCURRENCY", "0"),  # waited forever
    ("GRAPHRAG_LLM_CONCURRENCY", "-3"),
    ("GRAPHRAG_LLM_MAX_RETRIES", "-1"),  # AssertionError: unreachable, inside a step
    ("GRAPHRAG_EMBEDDING_DIMENSIONS", "0"),
    ("GRAPHRAG_EMBEDDING_DIMENSIONS", "1000000000"),  # exhausted memory
    ("GRAPHRAG_LLM_TIMEOUT", "nan"),
    ("GRAPHRAG_CHUNKING_MODE", "pages"),
]


def test_graphrag_index_refuses_each_bad_setting_at_once_and_leaves_the_index_untouched(sample_index, tmp_path):
    index_folder = Path(sample_index.db).parent
    before = _files_of(index_folder)
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_bytes((REPO / "dagster_home" / "dagster.yaml").read_bytes())
    environment = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "DAGSTER_HOME": str(home),
        "GRAPHRAG_INPUT_DIR": sample_index.input_dir,
        "GRAPHRAG_DB": sample_index.db,
        "GRAPHRAG_VECTORS": sample_index.vectors,
    }
    command = [sys.executable, "-c", "import sys; from graphrag_evaluation.cli import main; sys.exit(main())"]
    for variable, raw in BAD_SETTINGS:
        started = time.monotonic()
        result = subprocess.run(
            command, cwd=REPO, env=environment | {variable: raw}, capture_output=True, text=True, timeout=300
        )
        seconds = time.monotonic() - started
        assert result.returncode == 2, (variable, raw, result.stdout[-2000:], result.stderr[-2000:])
        assert f"graphrag-index: invalid setting: {variable}=" in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
        assert seconds < 60, f"{variable}={raw} took {seconds:.0f} s to be refused"
    assert _files_of(index_folder) == before
    # The setting corrected, a plain run finds the index done.
    rerun = subprocess.run(command, cwd=REPO, env=environment, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, (rerun.stdout[-2000:], rerun.stderr[-2000:])
    assert "no work: index is up to date" in rerun.stdout, rerun.stdout


def test_graphrag_query_refuses_a_bad_setting_naming_it(sample_index, tmp_path):
    environment = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "GRAPHRAG_DB": sample_index.db,
        "GRAPHRAG_LLM_MODEL": "fake-chat",
        "GRAPHRAG_LLM_BASE_URL": "http://127.0.0.1:9",  # never reached
        "GRAPHRAG_LLM_CONCURRENCY": "0",
    }
    command = [sys.executable, "-c", "import sys; from graphrag_query.cli import main; sys.exit(main())", "Who?"]
    result = subprocess.run(command, cwd=REPO, env=environment, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2, (result.stdout[-2000:], result.stderr[-2000:])
    assert "graphrag-query: GRAPHRAG_LLM_CONCURRENCY=0 is out of range" in result.stderr
    assert "Traceback" not in result.stderr
