"""The code location as graphrag-index runs it (``CODE_LOCATION``): each function imports
the definitions only when called, since a no-change pass needs none of their imports."""

from graphrag_assets.cli import CodeLocation


def job_definitions(settings):
    from .build import build_definitions

    return build_definitions(settings)


def graph_job_from_the_environment():
    """The graph job for the settings in the environment: what graphrag-index runs when each
    step is a process of its own (``dagster.reconstructable`` needs a module-level function
    every process can call; graphrag-index puts its settings in the environment first,
    ``IndexSettings.environment``)."""
    from graphrag_assets.settings import IndexSettings

    return job_definitions(IndexSettings.from_env()).resolve_job_def("build_graph")


CODE_LOCATION = CodeLocation(job_definitions, graph_job_from_the_environment)
