"""Pydantic models of what the model must return (the client validates the answers against them)."""

from __future__ import annotations

import functools
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, Field, field_validator


def clamped(low: float, high: float, whole: bool = False) -> BeforeValidator:
    """A field's answer brought into [low, high] (and rounded when ``whole``) before it is
    validated: the schema states the range, but the grammar of a local server does not
    enforce it, and a strength of 12 is a strong one, not a wrong answer. Anything but a
    number is left for validation to judge. The schema, and so the cache key, is unchanged."""

    def clamp(value: object) -> object:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return value
        value = min(max(value, low), high)
        return round(value) if whole else value

    return BeforeValidator(clamp)


@functools.cache
def schema_of(response_model: type[BaseModel]) -> dict:
    """The JSON schema of a response model, built once: pydantic builds it anew on every call
    (milliseconds for the extraction model), and every call needs it for its cache key and
    its request. Not to be changed by the caller."""
    return response_model.model_json_schema()


class Entity(BaseModel):
    name: str = Field(description="the entity's name as written in the text")
    type: str = Field(description="one of the requested entity types")
    description: str = Field(description="what the text says about the entity")


class Relationship(BaseModel):
    source: str = Field(description="name of the source entity, as listed in entities")
    target: str = Field(description="name of the target entity, as listed in entities")
    description: str = Field(description="how the two entities are related")
    strength: Annotated[int, clamped(1, 10, whole=True)] = Field(
        ge=1, le=10, description="1 incidental - 10 central and explicit"
    )


class GraphExtraction(BaseModel):
    entities: list[Entity] = Field(default_factory=list)
    relationships: list[Relationship] = Field(default_factory=list)


class Claim(BaseModel):
    subject: str = Field(description="the entity the claim is about, named as in the text")
    object: str | None = Field(
        default=None, description="another entity the claim involves, named as in the text; null if none"
    )
    type: str = Field(description="a short category in capital letters")
    status: Literal["TRUE", "FALSE", "SUSPECTED"] = Field(
        description=(
            "TRUE: stated as established; FALSE: stated to be untrue; SUSPECTED: alleged, planned or unconfirmed"
        )
    )
    start_date: str | None = Field(
        default=None, description="ISO 8601 date the claim's period starts, if the text gives one"
    )
    end_date: str | None = Field(
        default=None, description="ISO 8601 date the claim's period ends, if the text gives one"
    )
    description: str = Field(description="what is claimed, and on what evidence")
    source_text: str = Field(description="the words of the text supporting the claim, quoted exactly")

    @field_validator("status", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.strip().upper() if isinstance(value, str) else value


class ClaimExtraction(BaseModel):
    claims: list[Claim] = Field(default_factory=list)


class DescriptionSummary(BaseModel):
    summary: str


class Finding(BaseModel):
    summary: str
    explanation: str


class CommunityReport(BaseModel):
    title: str
    summary: str
    rating: Annotated[float, clamped(0, 10)] = Field(ge=0, le=10)
    rating_explanation: str
    findings: list[Finding] = Field(min_length=1, max_length=10)

    @field_validator("findings", mode="before")
    @classmethod
    def _at_most_ten(cls, value: object) -> object:
        return value[:10] if isinstance(value, list) else value  # the first ten: the ones the model put first


class MergeVerdict(BaseModel):
    pair: int = Field(description="the pair's number, as listed")
    same: bool = Field(description="true when both names denote the same entity")
    reason: str = Field(description="why, in one short sentence")


class MergeVerdicts(BaseModel):
    verdicts: list[MergeVerdict] = Field(default_factory=list)
