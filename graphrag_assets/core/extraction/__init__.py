"""Graph extraction: per-text-unit entity and relationship records.

``offline`` is the default when no LLM is configured: rule-based proper-noun and noun
phrase extraction (English) and jieba word segmentation with part of speech (Chinese),
with co-occurrence relationships inside a text unit. Nothing downloads at run time.
"""
