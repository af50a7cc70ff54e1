"""Claims (GraphRAG's covariates): what a text unit asserts about its entities, with a
status (TRUE, FALSE, SUSPECTED) and an optional period. Extracted on the LLM path only,
when GRAPHRAG_LLM_CLAIMS is on.

Stored per source (table ``covariates``) with subject and object as extracted: a name the
text unit's own extraction also found takes that entity's title, another keeps the name
as the model wrote it. Entity resolution happens later, per corpus, and may change when
other sources change, so a claim is resolved when it is read (``resolve_claims``): its
names go through the same name key as entities and the merges of ``entity_merges`` to the
entity they ended up in. A stored claim never has to be rewritten when merges change.

Kept light (Polars and the name key only): the query module reads claims through it.
"""

from __future__ import annotations

import polars as pl

from graphrag_common.ids import stable_id

from .extraction.names import name_key

COVARIATE_COLUMNS = {
    "id": pl.String,
    "human_readable_id": pl.Int64,
    "covariate_type": pl.String,  # always "claim"
    "type": pl.String,
    "description": pl.String,
    "subject_id": pl.String,  # entity name as extracted
    "object_id": pl.String,  # entity name as extracted, or null
    "status": pl.String,  # TRUE | FALSE | SUSPECTED
    "start_date": pl.String,
    "end_date": pl.String,
    "source_text": pl.String,
    "text_unit_id": pl.String,
    "corpus": pl.String,
    "source_partition": pl.String,
}
# What ``resolve_claims`` adds: the entities the subject and object resolved to (or null).
RESOLVED_COLUMNS = COVARIATE_COLUMNS | {"subject_entity_id": pl.String, "object_entity_id": pl.String}
CLAIM_HEADER = "id|subject|object|type|status|period|description"
# Claims take at most this share of a context budget left after entities, and only what
# they need: the rest stays with relationships.
CLAIM_SHARE = 0.25
_NO_OBJECT = {"", "none", "null", "n a", "unknown"}


def claim_records(unit: dict, claims: list[dict], titles: dict[str, str]) -> list[dict]:
    """Covariate rows (without ``human_readable_id``) of one text unit's claims. ``titles``
    maps the unit's extracted entity name keys to their titles. A claim without a subject
    is dropped; a repeated one is kept once."""
    rows: dict[str, dict] = {}
    for claim in claims:
        subject_key = name_key(claim["subject"])
        if not subject_key:
            continue
        object_key = name_key(claim.get("object") or "")
        if object_key in _NO_OBJECT:
            object_key = ""
        fields = {
            "type": claim["type"].strip().upper(),
            "status": claim["status"],
            "start_date": claim.get("start_date") or None,
            "end_date": claim.get("end_date") or None,
            "description": claim["description"].strip(),
            "source_text": claim["source_text"].strip(),
        }
        claim_id = stable_id(unit["id"], "claim", subject_key, object_key, *fields.values())
        rows.setdefault(
            claim_id,
            {
                "id": claim_id,
                "covariate_type": "claim",
                "subject_id": titles.get(subject_key, claim["subject"].strip()),
                "object_id": titles.get(object_key, (claim.get("object") or "").strip()) if object_key else None,
                "text_unit_id": unit["id"],
                "corpus": unit["corpus"],
                "source_partition": unit["source_partition"],
            }
            | fields,
        )
    return list(rows.values())


def resolve_claims(claims: pl.DataFrame, entities: pl.DataFrame, merges: pl.DataFrame | None) -> pl.DataFrame:
    """Claims whose subject and object name the entities they were merged into (entity
    titles, with ``subject_entity_id`` / ``object_entity_id``); a name that is no entity of
    the corpus stays as extracted, with a null entity id. ``merges`` are the corpus's
    ``entity_merges`` rows (None: no merges)."""
    into = {}
    if merges is not None:
        applied = merges.filter(~pl.col("rejected").fill_null(False))
        into = dict(zip(applied["name_key"].to_list(), applied["merged_into_key"].to_list()))
    by_key = entities.select("name_key", "id", "title")
    resolved = claims.select(list(COVARIATE_COLUMNS)).cast(COVARIATE_COLUMNS)
    for end in ("subject", "object"):
        key = pl.col(f"{end}_id").map_elements(name_key, return_dtype=pl.String).replace(into).alias("name_key")
        resolved = (
            resolved.with_columns(key)
            .join(by_key, on="name_key", how="left", maintain_order="left")
            .with_columns(
                pl.coalesce("title", f"{end}_id").alias(f"{end}_id"), pl.col("id_right").alias(f"{end}_entity_id")
            )
            .drop("name_key", "title", "id_right")
        )
    return resolved.select(list(RESOLVED_COLUMNS))


# A context order from the claim's content (subject, type, then the rest), so that it does
# not depend on the order claims were stored in; only claims equal in all of it (from
# different text units) fall back on their short number, which stays with its row.
CLAIM_ORDER = [
    "subject_id",
    "type",
    "object_id",
    "status",
    "start_date",
    "end_date",
    "description",
    "source_text",
    "human_readable_id",
]


def claim_sort_key(claim: dict) -> tuple:
    return tuple(claim[c] if claim[c] is not None else "" for c in CLAIM_ORDER)


def claim_line(claim: dict) -> str:
    """One context row under ``CLAIM_HEADER``."""
    period = (
        f"{claim['start_date'] or '?'} to {claim['end_date'] or '?'}"
        if claim["start_date"] or claim["end_date"]
        else ""
    )
    fields = [
        claim["human_readable_id"],
        claim["subject_id"],
        claim["object_id"] or "",
        claim["type"],
        claim["status"],
        period,
        claim["description"],
    ]
    return "|".join(str(f) for f in fields).replace("\n", " ")
