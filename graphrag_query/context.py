"""Packing context into token budgets, and resolving citations."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import polars as pl

from graphrag_assets.core.tokens import count_tokens

from .result import Citation


def pack(
    frame: pl.DataFrame, render: Callable[[dict], str], budget: int, header: str = ""
) -> tuple[pl.DataFrame, str, int]:
    """Rows of ``frame`` in order, as many as fit in ``budget`` tokens (header included).
    Returns (rows kept, text, tokens used); never exceeds the budget."""
    used = count_tokens(header + "\n") if header else 0
    if used > budget:
        return frame.clear(), "", 0
    kept, lines = [], [header] if header else []
    for index, row in enumerate(frame.iter_rows(named=True)):
        line = render(row)
        cost = count_tokens(line + "\n")
        if used + cost > budget:
            break
        used += cost
        kept.append(index)
        lines.append(line)
    return frame[kept] if kept else frame.clear(), "\n".join(lines) if kept else "", used if kept else 0


def citations_for(text_unit_ids: Iterable[str], text_units: pl.DataFrame, documents: pl.DataFrame) -> list[Citation]:
    wanted = list(dict.fromkeys(text_unit_ids))
    if not wanted:
        return []
    rows = (
        pl.DataFrame({"id": wanted})
        .with_row_index("order")
        .join(text_units.select("id", "document_id", "human_readable_id"), on="id")
        .join(documents.select(pl.col("id").alias("document_id"), pl.col("title").alias("document_title")), on="document_id", how="left")
        .sort("order")
    )
    return [
        Citation(row["id"], row["document_id"], row["document_title"] or "", row["human_readable_id"])
        for row in rows.iter_rows(named=True)
    ]
