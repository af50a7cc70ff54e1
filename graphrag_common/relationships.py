"""The description the indexer writes for a relationship that no shared sentence describes:
a count of the text units its two ends appear in together. Written by the graph build,
recognised by the query side, which quotes descriptions but not this one."""

from __future__ import annotations

import re

_COOCCURRENCE = re.compile(r" appear together in \d+ text units\.$")


def cooccurrence_description(source: str, target: str, text_units: int) -> str:
    return f"{source} and {target} appear together in {text_units} text units."


def is_cooccurrence_description(description: str) -> bool:
    """Whether a relationship's description is the count ``cooccurrence_description``
    writes, not text to quote."""
    return _COOCCURRENCE.search(description) is not None
