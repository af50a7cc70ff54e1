"""The Dagster shell: partitions, assets with their checks, jobs. Kept thin: every
computation is a call into ``graphrag_assets.core``; every write goes through
``graphrag_assets.storage``."""
