"""A benchmark's steps as the manage page's dashboard and the admin's home show them: material, items
(authored, generated, imported), review, human study, model runs, release. Each step has its count, its
state in words and at most one action (a button: what moves it on); the first step the admin can take
now is marked `next`.

A step is `done`, `todo` (the admin can take it now), `waiting` (others are at it: runs on the workers,
participants in their sessions), `blocked` (an earlier step comes first) or `optional` (a generator can
bring its own scenes)."""

from dataclasses import dataclass, field

from benchmarks import selectors as benchmark_selectors
from benchmarks.models import Release
from humaneval import selectors as humaneval_selectors
from modeleval import selectors as modeleval_selectors

GENERATING_FAMILIES = ("spatial457", "m3verse")  # the families construction.pipeline's generate stage makes items for
DONE, TODO, WAITING, BLOCKED, OPTIONAL = "done", "todo", "waiting", "blocked", "optional"
STATUS_WORDS = {DONE: "done", TODO: "to do", WAITING: "under way", BLOCKED: "an earlier step first",
                OPTIONAL: "optional"}


@dataclass
class Step:
    key: str
    title: str
    count: int
    state: str  # a sentence's worth: "3 sessions finished, 1 under way"
    status: str
    url: str  # where the step's state can be seen
    action: tuple[str, str] | None = None  # (button label, where it goes)
    next: bool = False

    @property
    def status_words(self) -> str:
        return STATUS_WORDS[self.status]


@dataclass
class StepFacts:
    """What the steps are drawn from, for one benchmark."""

    material: benchmark_selectors.MaterialAndItems = field(default_factory=benchmark_selectors.MaterialAndItems)
    progress: benchmark_selectors.BenchmarkProgress = field(default_factory=benchmark_selectors.BenchmarkProgress)
    studies: int = 0
    sessions: humaneval_selectors.SessionCounts = field(default_factory=humaneval_selectors.SessionCounts)
    runs: modeleval_selectors.RunCounts = field(default_factory=modeleval_selectors.RunCounts)


def facts_by_benchmark(ids) -> dict[int, StepFacts]:
    """Benchmark id -> its StepFacts, in a handful of queries whatever the number of benchmarks."""
    material = benchmark_selectors.material_and_items_by_benchmark(ids)
    progress = benchmark_selectors.progress_by_benchmark(ids)
    studies = humaneval_selectors.study_counts_by_benchmark(ids)
    sessions = humaneval_selectors.session_counts_by_benchmark(ids)
    runs = modeleval_selectors.run_counts_by_benchmark(ids)
    return {pk: StepFacts(material[pk], progress[pk], studies.get(pk, 0),
                          sessions.get(pk, humaneval_selectors.SessionCounts()),
                          runs.get(pk, modeleval_selectors.RunCounts())) for pk in ids}


def plural(n: int, word: str) -> str:
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word[:-1]}ies" if word.endswith("y") and word[-2:-1] not in "aeiou" else f"{n} {word}s"


def material_step(benchmark, facts: StepFacts, manage: str) -> Step:
    scenes, items = facts.material.scenes, facts.material.items
    if scenes:
        return Step("material", "Material", scenes, plural(scenes, "scene"), DONE, f"{manage}#uploads")
    if items or benchmark.family in GENERATING_FAMILIES:
        why = "the items need none" if items else "the generator can bring its own scenes"
        return Step("material", "Material", 0, f"no scenes: {why}", OPTIONAL, f"{manage}#uploads")
    return Step("material", "Material", 0, "no material yet", TODO, f"{manage}#uploads",
                ("Add material", f"{manage}#uploads"))


def items_step(benchmark, facts: StepFacts, manage: str) -> Step:
    m = facts.material
    if m.items:
        state = f"{plural(m.items, 'item')}: {m.authored} authored, {m.generated} generated, {m.imported} imported"
        return Step("items", "Items", m.items, state, DONE, f"{manage}#pipeline")
    if benchmark.family in GENERATING_FAMILIES:
        action = ("Generate items", f"{manage}#pipeline")
    elif m.scenes:
        action = ("Start a campaign", f"/manage/{benchmark.slug}/campaigns/new/")
    else:
        return Step("items", "Items", 0, "no items yet: add material first", BLOCKED, f"{manage}#pipeline")
    return Step("items", "Items", 0, "no items yet", TODO, f"{manage}#pipeline", action)


def review_step(benchmark, facts: StepFacts, manage: str) -> Step:
    p = facts.progress
    waiting = p.changes_waiting + p.questions_waiting
    parts = [f"{plural(n, word)} {what}" for n, word, what in (
        (p.changes_waiting, "change", "waiting for review"), (p.questions_waiting, "question", "waiting for review"),
        (p.flagged, "item", "with flagged consensus")) if n]
    state = ", ".join([*parts, plural(p.approved, "approved item")])
    if waiting:
        where = "/review/filtering/" if p.questions_waiting else "/review/"
        action = (f"Review {plural(waiting, 'waiting item')}", where)
        return Step("review", "Review", waiting, state, TODO, where, action)
    if p.flagged:
        where = f"/review/agreement/{benchmark.slug}/"
        return Step("review", "Review", p.flagged, state, TODO, where, (f"Settle {plural(p.flagged, 'flagged item')}",
                                                                        where))
    status = DONE if p.approved else BLOCKED
    return Step("review", "Review", p.approved, state if facts.material.items else "no items to review yet", status,
                "/review/")


def study_step(benchmark, facts: StepFacts, manage: str) -> Step:
    s = facts.sessions
    if not facts.studies:
        if not facts.progress.approved:
            return Step("study", "Human study", 0, "no human study yet: approve items first", BLOCKED,
                        f"{manage}#studies")
        return Step("study", "Human study", 0, "no human study yet", TODO, f"{manage}#studies",
                    ("Design a study", f"/manage/{benchmark.slug}/studies/design/"))
    studies = plural(facts.studies, "study")
    if not s.started:
        return Step("study", "Human study", 0, f"{studies}, no participant yet", TODO, f"{manage}#studies",
                    ("Invite participants", f"{manage}#studies"))
    under_way = s.started - s.finished
    state = f"{studies}, {plural(s.finished, 'session')} finished" + (f", {under_way} under way" if under_way
                                                                       else "")
    return Step("study", "Human study", s.finished, state, DONE if s.finished else WAITING, f"{manage}#studies")


def runs_step(benchmark, facts: StepFacts, manage: str) -> Step:
    r = facts.runs
    state = f"{plural(r.finished, 'run')} finished" + (f", {r.running} running" if r.running else "")
    if r.finished:
        return Step("runs", "Model runs", r.finished, state, DONE, f"{manage}#runs")
    if r.running:
        return Step("runs", "Model runs", 0, state, WAITING, f"{manage}#runs")
    if not facts.progress.approved:
        return Step("runs", "Model runs", 0, f"{state}: approve items first", BLOCKED, f"{manage}#runs")
    return Step("runs", "Model runs", 0, state, TODO, f"{manage}#runs", ("Run models", f"{manage}#runs"))


def release_step(benchmark, facts: StepFacts, manage: str) -> Step:
    release = facts.progress.release
    if release is not None:
        ready = release.status == Release.Status.READY
        state = f"release v{release.version}" + ("" if ready else f" ({release.get_status_display().lower()})")
        return Step("release", "Release", 1, state, DONE if ready else WAITING, f"/releases/{release.pk}/")
    if not facts.progress.approved:
        return Step("release", "Release", 0, "no release yet: approve items first", BLOCKED, f"{manage}#releases")
    return Step("release", "Release", 0, "no release yet", TODO, f"{manage}#releases",
                ("Export a release", f"{manage}#releases"))


STEPS = (material_step, items_step, review_step, study_step, runs_step, release_step)


def benchmark_steps(benchmark, facts: StepFacts) -> list[Step]:
    manage = f"/manage/{benchmark.slug}/"
    steps = [make(benchmark, facts, manage) for make in STEPS]
    first = next((step for step in steps if step.status == TODO), None)
    if first is not None:
        first.next = True
    return steps
