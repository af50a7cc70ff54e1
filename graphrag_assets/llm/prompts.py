"""Prompt files (``graphrag_assets/prompts/*.txt``, shipped in the package; ``prompts/`` at the
repository root links to them; the query side's in ``graphrag_query/prompts/``), loaded at
run time. A prompt's version is the hash of
its text: it is part of every cache key and of the code version of the assets that use
it, so editing a prompt re-runs exactly what depends on it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from string import Template

from graphrag_common.ids import content_hash

from ..configuration import value_of

INDEXER_PROMPTS = Path(__file__).resolve().parents[1] / "prompts"


def prompts_dir(package_prompts: Path = INDEXER_PROMPTS) -> Path:
    """GRAPHRAG_PROMPTS_DIR, else the package's own folder (the indexer's, or the query
    side's for its prompts)."""
    configured = value_of("GRAPHRAG_PROMPTS_DIR")
    return Path(configured) if configured else package_prompts


@dataclass(frozen=True)
class Prompt:
    name: str
    text: str

    @property
    def version(self) -> str:
        return content_hash(self.text)[:12]

    def render(self, **values: object) -> str:
        return Template(self.text).substitute({k: str(v) for k, v in values.items()})


def load_prompt(name: str, package_prompts: Path = INDEXER_PROMPTS) -> Prompt:
    path = prompts_dir(package_prompts) / f"{name}.txt"
    try:
        return Prompt(name, path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"prompt {name!r} not found at {path} (GRAPHRAG_PROMPTS_DIR)") from None


def prompts_version(*names: str) -> str:
    """One version string for a set of prompts (for an asset's code version)."""
    return content_hash("|".join(load_prompt(name).version for name in names))[:12]
