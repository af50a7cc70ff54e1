"""The query modes, by name: the one registry that ``search``, the public ``*_search``
functions (``api.py``) and ``graphrag-query --method`` are made from. A mode is its module,
which defines ``MODE``: its settings and the function that prepares its search. Light
(no Polars): the command line lists the modes without importing them."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ModeSearch:
    """What a mode module defines as ``MODE``. ``prepare(question, reader, settings,
    writer, **inputs)`` builds the search with a ``settings`` instance; ``inputs`` are its
    arguments that are not settings (a conversation's history); ``budget`` names the
    settings field the shared ``budget`` option sets."""

    settings: type
    prepare: Callable[..., Any]
    inputs: tuple[str, ...] = ()
    budget: str = "budget"


@dataclass(frozen=True)
class Mode:
    name: str
    module: str
    summary: str  # what the mode answers from, for the help of the API and the command line

    def load(self) -> ModeSearch:
        """The mode module's ``MODE`` (importing the module)."""
        return importlib.import_module(self.module).MODE


MODES = {
    mode.name: mode
    for mode in (
        Mode("global", "graphrag_query.global_mode", "map-reduce over the community reports: the corpus as a whole"),
        Mode("local", "graphrag_query.local_mode", "the question's entities and their graph neighbourhood"),
        Mode("drift", "graphrag_query.drift_mode", "a primer over reports, then rounds of local follow-up questions"),
        Mode("basic", "graphrag_query.basic_mode", "plain retrieval over text units, no graph"),
    )
}
