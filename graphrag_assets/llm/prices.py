"""Token prices per model, and what a call costs.

The price of a call is fixed when it is made and stored with it (``llm_calls``), so the
cost history stays right after a price changes. Prices come from a file the user edits
(``GRAPHRAG_LLM_PRICES``), CSV with the header ``model,input_per_million,output_per_million``
or TOML with one table per model::

    ["gpt-4o-mini"]
    input_per_million = 0.15
    output_per_million = 0.60

A model the file does not list costs ``GRAPHRAG_LLM_PRICE_INPUT`` / ``_OUTPUT``.
"""

from __future__ import annotations

import csv
import tomllib
from pathlib import Path
from typing import Any, NamedTuple

PRICES_VARIABLE = "GRAPHRAG_LLM_PRICES"


class ModelPrice(NamedTuple):
    """USD per million prompt (input) and completion (output) tokens."""

    input_per_million: float
    output_per_million: float


PRICE_FIELDS = ModelPrice._fields  # the file's columns (CSV) or keys (TOML)


def call_cost_usd(prompt_tokens: int, completion_tokens: int, price: ModelPrice) -> float:
    return prompt_tokens / 1e6 * price.input_per_million + completion_tokens / 1e6 * price.output_per_million


def read_price_file(path: str | Path) -> dict[str, ModelPrice]:
    """model -> price, from a CSV or TOML file; a ValueError names the file and what is wrong."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ValueError(f"{PRICES_VARIABLE}: cannot read {path}: {error.strerror or error}") from None
    if path.suffix.lower() == ".toml":
        try:
            entries = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise ValueError(f"{PRICES_VARIABLE}: {path} is not valid TOML: {error}") from None
    elif path.suffix.lower() == ".csv":
        rows = list(csv.DictReader(text.splitlines()))
        if rows and "model" not in rows[0]:
            raise ValueError(f"{PRICES_VARIABLE}: {path} needs the header model,{','.join(PRICE_FIELDS)}")
        entries = {row["model"].strip(): row for row in rows if (row.get("model") or "").strip()}
    else:
        raise ValueError(f"{PRICES_VARIABLE}: {path} must be a .csv or .toml file")
    return {model: _price(path, model, entry) for model, entry in entries.items()}


def _price(path: Path, model: str, entry: Any) -> ModelPrice:  # Any: a CSV row, or any TOML value
    try:
        price = ModelPrice(**{field: float(entry[field]) for field in PRICE_FIELDS})
    except (TypeError, KeyError, ValueError):
        raise ValueError(
            f"{PRICES_VARIABLE}: {path}, model {model!r} needs numbers {' and '.join(PRICE_FIELDS)}"
        ) from None
    if min(price) < 0:
        raise ValueError(f"{PRICES_VARIABLE}: {path}, model {model!r} has a negative price")
    return price
