"""What re-runs, and why: every stage of the index, the version of its code and the hash of
the settings it reads (which settings those are is declared in ``configuration``).

A stage's fingerprint is its code version (``CODE_VERSIONS``) and a hash of the settings
it depends on. The last complete build of a corpus records the fingerprint of every stage
(``corpus_builds.stage_fingerprints``); a source records the reading fingerprint it was
indexed with (``sources.settings_hash``). A stage whose fingerprint differs from the
recorded one is redone for every source of the corpus, and the stages after it run again
on what it wrote: ``graphrag-index`` decides so in ``build_state.corpus_work``, and the assets
that otherwise keep earlier work (``KEEPS_EARLIER_WORK``) decide so themselves, so a run
from the UI redoes the same. The code versions are also the assets' ``code_version``, so
the UI marks stale what ``graphrag-index`` redoes.

Imports stay light (no Dagster): ``graphrag-index`` lists the stages before loading it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from graphrag_common.ids import content_hash

from .configuration import INDEX_SETTINGS, default_of, settings_of_stage
from .llm.prompts import prompts_version
from .llm.settings import LLMSettings

if TYPE_CHECKING:
    from .settings import IndexSettings

# Bump a stage's number with any change to its code that changes what it writes (a new
# chunk boundary rule, another extraction heuristic): the next pass redoes that stage for
# every source and re-runs what follows it. In pipeline order.
CODE_VERSIONS = {
    "reading": 1,
    "chunking": 4,
    "extraction": 5,
    "graph": 5,
    "clustering": 1,
    "reports": 3,
    "embeddings": 1,
}
STAGES = tuple(CODE_VERSIONS)
# What the offline extraction's rules make, versioned apart from the stage's code so that a
# change to the rules redoes offline indexes only: a model index keeps its paid extraction.
# Version 1 is every index recorded before the version was hashed (no "rules" key).
# 2: an office with no holder is no entity
# 3: in a long document, "X of the Y" is no name when Y is none ("Founder of the Feast")
# 4: in a long document, a common noun heading several names is none ("the Ghost")
# 5: an honorific stays on a name that is a function word without it ("Dr. Who")
# 6: in a long document, an oath or greeting is no name ("God bless us!"); counts read overlaps once
OFFLINE_EXTRACTION_RULES = 6
STAGE_ASSETS = {
    "reading": ("documents",),
    "chunking": ("text_units",),
    "extraction": ("extractions",),
    "graph": ("entities", "relationships"),
    "clustering": ("communities",),
    "reports": ("community_reports",),
    "embeddings": ("embeddings",),
}
EXTRACTION_PROMPTS = ("extract_graph", "glean")
CLAIM_PROMPT = "extract_claims"  # used only with GRAPHRAG_LLM_CLAIMS
# Prompt files a stage uses with an LLM: part of its assets' code version too.
STAGE_PROMPTS = {
    "extraction": (*EXTRACTION_PROMPTS, CLAIM_PROMPT),
    "graph": ("summarize_descriptions", "confirm_merges"),
    "reports": ("community_report",),
}
# Assets that keep what they made before unless their stage's fingerprint changed or a run
# config asks them to rebuild (``rebuild: true``): chunks and extractions of sources not
# read again, reports whose input is unchanged, vectors of unchanged texts. The other
# stages recompute their corpus from their inputs on every run.
KEEPS_EARLIER_WORK = ("text_units", "extractions", "community_reports", "embeddings")


@dataclass(frozen=True)
class Fingerprint:
    version: int
    settings: str  # hash of the settings the stage reads

    def __str__(self) -> str:
        return f"v{self.version}/{self.settings}"

    @classmethod
    def parse(cls, text: str) -> Fingerprint:
        version, settings = text.split("/", 1)
        return cls(int(version.removeprefix("v")), settings)


def code_version(stage: str, asset: str) -> str:
    prompts = STAGE_PROMPTS.get(stage)
    return f"{asset}-v{CODE_VERSIONS[stage]}" + (f"-{prompts_version(*prompts)}" if prompts else "")


def _stage_settings(settings: IndexSettings, llm: LLMSettings) -> dict[str, dict]:
    """The settings each stage reads: the index settings ``configuration`` assigns to it,
    and with an LLM its models, options and prompts. The LLM part is hashed under the names
    indexes have recorded since before the declaration (``model`` for the stage's resolved
    model, ``budget``, ``merges``), so it is spelled out here; a test checks it against the
    declaration. Claims count only when extracted, so switching them on re-extracts while
    an index without claims keeps its fingerprint."""
    values = settings.model_dump()

    def declared(stage: str) -> dict:
        return {setting.field: values[setting.field] for setting in settings_of_stage(stage, INDEX_SETTINGS)}

    claims = {"claims": llm.claim_description, "claim_prompt": prompts_version(CLAIM_PROMPT)} if llm.claims else {}
    extraction = {
        "model": llm.model_for("extraction"),
        "mode": llm.mode,
        "gleanings": llm.gleanings,
        "entity_types": llm.entity_types,
        "prompts": prompts_version(*EXTRACTION_PROMPTS),
    } | claims
    # The bound on a document's pairs came after indexes recorded the offline extraction's
    # fingerprint, and its default changes no ordinary corpus: hashed only when set otherwise.
    bound = values["max_document_pairs"]
    offline_bound = {"max_document_pairs": bound} if bound != default_of("GRAPHRAG_MAX_DOCUMENT_PAIRS") else {}
    offline = {"method": "offline", "rules": OFFLINE_EXTRACTION_RULES} | offline_bound
    merges = prompts_version("confirm_merges") if llm.confirm_merges else "unconfirmed"
    summaries = {
        "model": llm.model_for("summary"),
        "prompt": prompts_version("summarize_descriptions"),
        "merges": merges,
    }
    reports = {
        "model": llm.model_for("report"),
        "budget": llm.report_max_input_tokens,
        "prompt": prompts_version("community_report"),
    }
    return {
        "reading": declared("reading"),
        "chunking": declared("chunking"),
        "extraction": extraction if llm.enabled else offline,
        "graph": declared("graph") | (summaries if llm.enabled else {}),
        "clustering": declared("clustering"),
        "reports": reports if llm.enabled else {"method": "extractive"},
        "embeddings": {"model": llm.embedding_model} if llm.embeddings_enabled else declared("embeddings"),
    }


def current_fingerprints(settings: IndexSettings) -> dict[str, Fingerprint]:
    """Every stage's fingerprint under the settings of now (LLM settings from the
    environment, as the LLM resources read them)."""
    return {
        stage: Fingerprint(CODE_VERSIONS[stage], content_hash(json.dumps(read, sort_keys=True))[:16])
        for stage, read in _stage_settings(settings, LLMSettings.from_env()).items()
    }


def dump_fingerprints(fingerprints: dict[str, Fingerprint]) -> str:
    return json.dumps({stage: str(fingerprint) for stage, fingerprint in fingerprints.items()}, sort_keys=True)


def load_fingerprints(recorded: str | None) -> dict[str, Fingerprint]:
    """A recorded build's fingerprints; none for a build made before they were recorded."""
    return {stage: Fingerprint.parse(text) for stage, text in json.loads(recorded or "{}").items()}


def stage_changes(recorded: dict[str, Fingerprint], current: dict[str, Fingerprint]) -> dict[str, str]:
    """stage -> why it must be redone, for every stage whose fingerprint differs, in
    pipeline order."""
    if not recorded:
        return dict.fromkeys(
            STAGES, "no stage fingerprints recorded (no complete build yet, or one by an older version)"
        )
    changes = {}
    for stage in STAGES:
        before, now = recorded.get(stage), current[stage]
        if before is None:
            changes[stage] = f"{stage} not recorded with the last build"
        elif before.version != now.version:
            changes[stage] = f"{stage} code changed (version {before.version} -> {now.version})"
        elif before.settings != now.settings:
            changes[stage] = f"{stage} settings or method changed"
    return changes


def stages_from(stage: str) -> tuple[str, ...]:
    """The stage and every stage after it (what redoing it re-runs)."""
    return STAGES[STAGES.index(stage) :]


def assets_of(stages: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(asset for stage in stages for asset in STAGE_ASSETS[stage])
