"""The LLM path: any OpenAI-compatible endpoint, spoken directly (endpoint.py), with structured
outputs, retries, rate limits, a DuckDB cache and cost accounting."""
