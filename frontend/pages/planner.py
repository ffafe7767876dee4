"""The study planner on the design page: from a pilot study's human row or the numbers the
admin types (the paper's), how many participants give each cell of the main table an interval of the
chosen half-width (`results.planning.study_plan`). A GET form beside the design form; a refused
value is said beside its field, the design form unaffected."""

from core.errors import DomainError
from humaneval import selectors as humaneval_selectors
from results import planning

ACCURACY_PREFIX = "accuracy "
# Items per participant: blank is up to 50, as many as the smallest cell has (results.planning).
DEFAULTS = {"half_width": "5", "items_per_participant": "", "icc": "0.05", "pilot": "", "pay_per_hour": "12"}


def planner_context(benchmark, query) -> dict:
    """{"planner": {"form", "studies", "plan", "error", "status"}}; the plan is computed when the query
    has a half-width (the planner form was sent), else with the defaults (a first look)."""
    studies = list(humaneval_selectors.studies_of(benchmark, oldest_first=True))
    form = {name: query.get(name, default) for name, default in DEFAULTS.items()}
    given = {key[len(ACCURACY_PREFIX):]: value for key, value in query.items() if key.startswith(ACCURACY_PREFIX)}
    planner = {"form": form, "studies": studies, "given": given, "plan": None, "error": None, "sent": "half_width" in query}
    pilot = None
    if form["pilot"]:
        pilot = next((study for study in studies if str(study.pk) == form["pilot"]), None)
        if pilot is None:
            planner["error"] = {"pilot": "No such study on this benchmark."}
            return {"planner": planner}
    try:
        planner["plan"] = planning.study_plan(benchmark, form["half_width"], form["items_per_participant"],
                                              form["icc"] or 0, pilot, given, form["pay_per_hour"] or 0)
        form["items_per_participant"] = str(planner["plan"]["items_per_participant"])
    except DomainError as exc:
        planner["error"] = {exc.field: exc.message}
    return {"planner": planner}
