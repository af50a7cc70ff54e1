"""The steps that ask the model: extraction (with gleaning and claims), merge confirmation
and description summaries (the LLM graph build), and community reports. Each is a function
that takes a client factory (llm/client.py), so the assets stay thin and the stages are
tested against a real HTTP fake of the endpoint."""
