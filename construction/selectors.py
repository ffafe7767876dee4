"""What pages, the API and commands read of a benchmark's pipeline."""


def stages_of(benchmark):
    """The benchmark's pipeline stages in order, each with its latest job."""
    return benchmark.pipeline_stages.select_related("last_job").order_by("position")
