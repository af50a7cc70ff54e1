"""Pydantic models of what the model must return (instructor validates against them)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Entity(BaseModel):
    name: str = Field(description="the entity's name as written in the text")
    type: str = Field(description="one of the requested entity types")
    description: str = Field(description="what the text says about the entity")


class Relationship(BaseModel):
    source: str = Field(description="name of the source entity, as listed in entities")
    target: str = Field(description="name of the target entity, as listed in entities")
    description: str = Field(description="how the two entities are related")
    strength: int = Field(ge=1, le=10, description="1 incidental - 10 central and explicit")


class GraphExtraction(BaseModel):
    entities: list[Entity] = Field(default_factory=list)
    relationships: list[Relationship] = Field(default_factory=list)


class DescriptionSummary(BaseModel):
    summary: str


class Finding(BaseModel):
    summary: str
    explanation: str


class CommunityReport(BaseModel):
    title: str
    summary: str
    rating: float = Field(ge=0, le=10)
    rating_explanation: str
    findings: list[Finding] = Field(min_length=1, max_length=10)


class MergeVerdict(BaseModel):
    pair: int = Field(description="the pair's number, as listed")
    same: bool = Field(description="true when both names denote the same entity")
    reason: str = Field(description="why, in one short sentence")


class MergeVerdicts(BaseModel):
    verdicts: list[MergeVerdict] = Field(default_factory=list)
