"""The LLM path: any OpenAI-compatible endpoint, with structured outputs (instructor),
retries, rate limits, a DuckDB cache and cost accounting."""
