"""Packing context into token budgets, and resolving citations."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import polars as pl

from graphrag_common.tokens import count_tokens

from .result import Citation


def pack(
    frame: pl.DataFrame,
    render: Callable[[dict], str],
    budget: int,
    header: str = "",
    cost: Callable[[dict], int] | None = None,
    pass_over: int = 0,
) -> tuple[pl.DataFrame, str, int]:
    """Rows of ``frame`` in order, as many as fit in ``budget`` tokens (header included).
    Returns (rows kept, text, tokens used); never exceeds the budget. ``cost``: a row's
    tokens (its rendered line and line break) when known already. ``pass_over``: how many
    rows too large for what is left may be passed over, in a row, for smaller ones after
    them (a long text unit ranked first must not leave a small budget empty); 0 stops at
    the first row that does not fit, so that the rows kept are a prefix of the frame."""
    used = count_tokens(header + "\n") if header else 0
    if used > budget:
        return frame.clear(), "", 0
    kept, lines, passed = [], [header] if header else [], 0
    # Slices, not the whole frame: a ranking of thousands of rows fills a budget in dozens.
    for offset, rows in _slices(frame):
        for index, row in enumerate(rows.iter_rows(named=True), start=offset):
            line = render(row)
            tokens = cost(row) if cost is not None else count_tokens(line + "\n")
            if used + tokens > budget:
                passed += 1
                if passed > pass_over:
                    return _packed(frame, kept, lines, used)
                continue
            passed = 0
            used += tokens
            kept.append(index)
            lines.append(line)
    return _packed(frame, kept, lines, used)


def _slices(frame: pl.DataFrame, size: int = 32):
    for offset in range(0, frame.height, size):
        yield offset, frame.slice(offset, size)


def _packed(frame: pl.DataFrame, kept: list[int], lines: list[str], used: int) -> tuple[pl.DataFrame, str, int]:
    return frame[kept] if kept else frame.clear(), "\n".join(lines) if kept else "", used if kept else 0


def citations_for(text_unit_ids: Iterable[str], text_units: pl.DataFrame, documents: pl.DataFrame) -> list[Citation]:
    wanted = list(dict.fromkeys(text_unit_ids))
    if not wanted:
        return []
    rows = (
        pl.DataFrame({"id": wanted})
        .with_row_index("order")
        .join(text_units.select("id", "document_id", "human_readable_id"), on="id")
        .join(
            documents.select(pl.col("id").alias("document_id"), pl.col("title").alias("document_title")),
            on="document_id",
            how="left",
        )
        .sort("order")
    )
    return [
        Citation(row["id"], row["document_id"], row["document_title"] or "", row["human_readable_id"])
        for row in rows.iter_rows(named=True)
    ]
