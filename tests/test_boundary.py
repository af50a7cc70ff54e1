"""The line between the indexer and the query side, and the query modes' single algorithm:
what a reviewer would otherwise check by reading the import graph and every mode."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# What graphrag_query may import from graphrag_assets: configuration, the LLM client, the
# storage reader and the plain functions the build shares with queries.
ALLOWED = {
    "graphrag_assets.configuration",
    "graphrag_assets.llm",
    "graphrag_assets.storage.connection",
    "graphrag_assets.storage.location",
    "graphrag_assets.storage.snapshot",
    "graphrag_assets.storage.published_tables",
    "graphrag_assets.core.claims",
    "graphrag_assets.core.embedding",
    "graphrag_assets.core.evaluation",
    "graphrag_assets.core.graph_pictures",
}


def _contract(name: str) -> dict:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    return next(c for c in config["tool"]["importlinter"]["contracts"] if c["name"] == name)


def _modules(package: Path, prefix: str) -> set[str]:
    """The modules and packages directly inside a package folder, by dotted name."""
    found = set()
    for path in package.iterdir():
        if path.is_dir() and (path / "__init__.py").exists():
            found.add(f"{prefix}.{path.name}")
        elif path.suffix == ".py" and path.stem != "__init__":
            found.add(f"{prefix}.{path.stem}")
    return found


def test_every_indexer_module_is_either_allowed_to_the_query_side_or_forbidden_to_it():
    forbidden = set(_contract("The query side imports from the indexer only its allow-list")["forbidden_modules"])
    assert not forbidden & ALLOWED
    # A package the allow-list opens in part is covered module by module.
    partly_allowed = {name.rsplit(".", 1)[0] for name in ALLOWED if name.count(".") == 2}
    indexer = REPO / "graphrag_assets"
    every = _modules(indexer, "graphrag_assets") - partly_allowed
    for package in partly_allowed:
        every |= _modules(indexer / package.split(".", 1)[1], package)
    uncovered = every - forbidden - ALLOWED
    assert not uncovered, (
        f"{sorted(uncovered)}: add each to the allow-list contract in pyproject.toml (forbidden_modules) or, "
        "if the query side needs it, to ALLOWED here and to the contract's comment"
    )


def test_the_query_side_imports_only_its_allow_list_of_the_indexer():
    imported = set()
    for path in (REPO / "graphrag_query").glob("*.py"):
        imported |= set(re.findall(r"^\s*from (graphrag_assets[\w.]*) import", path.read_text(), re.MULTILINE))
    assert imported, "the query side reads the index through the indexer's storage"
    outside = {name for name in imported if not any(name == a or name.startswith(a + ".") for a in ALLOWED)}
    assert not outside, outside


# A branch on whether a model is there: the writer (``writer.py``) is chosen once instead.
OFFLINE_BRANCH = re.compile(r"\bif\s+(not\s+)?llm\b|\bllm\s+is\s+(not\s+)?None\b|\buse_llm\b|\bif\s+.*\boffline\b")


def test_no_query_mode_branches_on_offline_or_model():
    for name in ("global_mode", "local_mode", "drift_mode", "basic_mode"):
        source = (REPO / "graphrag_query" / f"{name}.py").read_text()
        branches = [line.strip() for line in source.splitlines() if OFFLINE_BRANCH.search(line)]
        assert not branches, f"{name}.py: {branches}"


# The indexer's assets wire a stage to its store: the methods bundle (``stages/methods.py``)
# is chosen once from the settings, so no asset asks whether a model is configured.
ASSET_BRANCH = re.compile(OFFLINE_BRANCH.pattern + r"|\bllm\.(enabled|embeddings_enabled)\b")


def test_no_asset_branches_on_offline_or_model():
    assets = sorted((REPO / "graphrag_assets" / "defs").rglob("*.py"))
    assert any(path.name == "graph.py" for path in assets)
    for path in assets:
        branches = [line.strip() for line in path.read_text().splitlines() if ASSET_BRANCH.search(line)]
        assert not branches, f"{path.relative_to(REPO)}: {branches}"
