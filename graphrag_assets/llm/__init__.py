"""The LLM path: any OpenAI-compatible endpoint or Azure OpenAI, through the openai SDK and
instructor (openai_sdk.py), with structured outputs, retries, rate limits, a DuckDB cache
and cost accounting."""
