"""Dagster instance plugins named in dagster.yaml: the run launcher with a process health
check, and the SQLite event log storage that writes a batch of events per transaction."""
