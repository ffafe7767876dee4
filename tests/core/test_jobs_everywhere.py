"""Long work reports through core.Job (#32): every Celery task of the project either runs as a job (its
code path calls core.jobs) or is a quick or periodic one named below with its reason; no task reports
progress another way (Celery's `update_state`, which nothing reads); no page script reloads itself to
follow work; and scene processing is a job with its steps, its report and one run per attempt however
often its message is delivered."""

import ast
import re
from pathlib import Path

import pytest

from benchmarks.models import AssetRole
from core.models import Job
from scenes import dispatch, tasks
from scenes.services import import_scan
from tests.benchmarks.test_import_scans import scannet_inputs
from tests.factories import BenchmarkFactory

ROOT = Path(__file__).resolve().parents[2]
APPS = ("annotation", "benchmarks", "core", "crowd", "frontend", "humaneval", "modeleval", "results", "review",
        "construction", "config", "scenes", "demo")


def project_sources():
    for app in APPS:
        yield from (ROOT / app).rglob("*.py") if (ROOT / app).exists() else ()


# The verbs that make a task a job's task (core/jobs.py); request_job alone only queues one.
JOB_VERBS = {"start_job", "running_job", "advance_job", "finish_job"}
# Tasks that are not long work, each with why. Anything else a task does that outlasts a request is a job.
QUICK_OR_PERIODIC = {
    "annotation.tasks.expire_stale_leases": "beat sweep: one UPDATE of lapsed leases",
    "core.tasks.purge_idempotency_keys": "beat sweep: one DELETE of keys older than 24 h",
    "core.tasks.fail_stalled_running_jobs": "beat sweep over the jobs themselves",
    "scenes.tasks.reprocess_stalled_scenes": "beat sweep: sends scene processing, each its job",
    "modeleval.tasks.reap_stalled_batches": "beat sweep: hands on dead workers' batches and lost scorings",
    "modeleval.tasks.complete_prompt": "one prompt whose caller (a job's task) waits for the answer",
    "review.tasks.embed_arrived_texts": "the few texts one import or submission just wrote, as they arrive",
}
TASK_DECORATORS = {"shared_task", "task"}  # @shared_task, @app.task (with or without arguments)


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(tree: ast.Module, module: str) -> dict[str, str]:
    """Local name -> what it names (a module, or module.attribute), relative imports resolved."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(module.split(".")[:-node.level] + ([base] if base else []))
            for alias in node.names:
                names[alias.asname or alias.name] = f"{base}.{alias.name}" if base else alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = alias.name
    return names


def _is_task(function: ast.FunctionDef) -> bool:
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in TASK_DECORATORS:
            return True
    return False


class Sources:
    """The project's functions by dotted name, and what each one calls, resolved through its imports."""

    def __init__(self, modules: dict[str, str]):
        self.functions, self.imports = {}, {}
        for module, text in modules.items():
            tree = ast.parse(text)
            self.imports[module] = _imports(tree, module)
            for node in tree.body:
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    self.functions[f"{module}.{node.name}"] = (module, node)

    def tasks(self) -> list[str]:
        return sorted(name for name, (_, node) in self.functions.items() if _is_task(node))

    def _called(self, name: str) -> set[str]:
        module, node = self.functions[name]
        imports, called = self.imports[module], set()
        for call in ast.walk(node):
            if not isinstance(call, ast.Call):
                continue
            target = call.func
            if isinstance(target, ast.Name):
                called.add(imports.get(target.id, f"{module}.{target.id}"))
            elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                owner = imports.get(target.value.id)
                if owner:
                    called.add(f"{owner}.{target.attr}")
        return called

    def reports_through_a_job(self, name: str) -> bool:
        """Does the function, or what it calls in the project (at any depth), call a job verb?"""
        seen, todo = set(), [name]
        while todo:
            current = todo.pop()
            if current in seen or current not in self.functions:
                continue
            seen.add(current)
            called = self._called(current)
            if {f"core.jobs.{verb}" for verb in JOB_VERBS} & called:
                return True
            todo += called
        return False


def unreported_tasks(sources: Sources) -> list[str]:
    return [task for task in sources.tasks() if task not in QUICK_OR_PERIODIC and not sources.reports_through_a_job(task)]


def test_every_task_runs_as_a_job_or_is_named_quick_or_periodic_with_its_reason():
    sources = Sources({_module_name(path): path.read_text() for path in project_sources()})
    tasks = sources.tasks()
    assert len(tasks) > 10 and set(QUICK_OR_PERIODIC) <= set(tasks)  # the list names no task that is gone
    assert unreported_tasks(sources) == []


def test_the_task_guard_catches_a_task_that_reports_no_other_way():
    planted = Sources({
        "planted.tasks": (
            "from celery import shared_task\n"
            "from config.celery import app\n"
            "from . import work\n"
            "@shared_task\ndef silent(pk): return work.crunch(pk)\n"
            "@app.task(bind=True)\ndef with_state(self, pk): self.update_state(state='PROGRESS')\n"
            "@shared_task(acks_late=True)\ndef as_job(pk, job_id): return work.as_job(pk, job_id)\n"),
        "planted.work": (
            "from core.jobs import running_job\n"
            "def crunch(pk): return pk\n"
            "def as_job(pk, job_id):\n    with running_job(job_id) as job:\n        return _step(pk)\n"
            "def _step(pk): return pk\n"),
    })
    assert planted.tasks() == ["planted.tasks.as_job", "planted.tasks.silent", "planted.tasks.with_state"]
    assert unreported_tasks(planted) == ["planted.tasks.silent", "planted.tasks.with_state"]


def test_no_task_reports_progress_through_celery_state():
    offenders = [str(path.relative_to(ROOT)) for path in project_sources()
                 if re.search(r"\bupdate_state\(", path.read_text())]
    assert offenders == []


@pytest.mark.django_db
def test_a_stored_scan_is_processed_as_a_job_with_its_steps_and_report(django_capture_on_commit_callbacks):
    bench = BenchmarkFactory(family="hypo3d")
    with django_capture_on_commit_callbacks(execute=True):
        scene = import_scan(bench, "scene0000_00", **scannet_inputs())
    job = Job.objects.get(kind="scene_processing")
    assert job.status == Job.Status.DONE and (job.done, job.total) == (2, 2)
    assert job.key == f"scene-processing:{scene.pk}:0" and "scene0000_00" in job.subject
    assert {AssetRole.VIEWER_POINTS, AssetRole.TOPVIEW_SEMANTIC} <= set(job.report["assets"])


@pytest.mark.django_db
def test_a_redelivered_message_does_not_process_the_scene_again(monkeypatch, django_capture_on_commit_callbacks):
    bench = BenchmarkFactory(family="hypo3d")
    with django_capture_on_commit_callbacks(execute=True):
        scene = import_scan(bench, "scene0000_00", **scannet_inputs())
    built = []
    monkeypatch.setattr(tasks, "build_viewer_assets", lambda *args: built.append(args))
    job = Job.objects.get(kind="scene_processing")
    tasks.process_scene(scene.pk, job.pk)  # the same attempt's message again
    assert built == []
    # a new attempt (the reaper's) is a new job, and runs
    tasks.process_scene(scene.pk, dispatch.scene_processing_job(scene.pk, attempt="1"))
    assert len(built) == 1 and Job.objects.filter(kind="scene_processing", status=Job.Status.DONE).count() == 2


@pytest.mark.django_db
def test_processing_that_fails_fails_its_job_with_the_reason(monkeypatch, django_capture_on_commit_callbacks):
    bench = BenchmarkFactory(family="hypo3d")

    def broken(*args):
        raise ValueError("the scan has no points")

    monkeypatch.setattr(tasks, "load_scene_points", broken)
    with pytest.raises(ValueError), django_capture_on_commit_callbacks(execute=True):
        import_scan(bench, "scene0000_00", **scannet_inputs())
    job = Job.objects.get(kind="scene_processing")
    assert job.status == Job.Status.FAILED and "the scan has no points" in job.message


@pytest.mark.django_db
def test_a_dedup_run_reports_through_its_job_and_a_redelivered_message_runs_nothing(
        monkeypatch, django_capture_on_commit_callbacks):
    from core import roles
    from review import dedup
    from review import tasks as review_tasks
    from tests.factories import ChangeFactory, ItemFactory, UserFactory
    from tests.review.test_review_dedup import bag_of_words_encoder

    first = ChangeFactory(raw_text="The chair has been moved to the window.")
    ChangeFactory(scene=first.scene, raw_text="The chair has been moved to the window.")  # an exact copy
    ItemFactory(change=first, question="What is left of the chair now?")
    monkeypatch.setattr(dedup, "load_encoder", lambda: bag_of_words_encoder([]))
    with django_capture_on_commit_callbacks(execute=True):
        run = dedup.start_dedup(first.scene.benchmark, UserFactory(role=roles.ADMIN))
    run.refresh_from_db()
    job = run.job
    # one step per distinct text (2), then one per kind compared (2); what it found as the report
    assert job.kind == "dedup" and job.key == f"dedup:{run.pk}"
    assert job.status == Job.Status.DONE and (job.done, job.total) == (4, 4)
    assert job.report == {"dedup_run": run.pk, "threshold": 0.8, "texts": 3, "pairs": 1,
                          "pairs_by_kind": {"change": 1, "question": 0}}
    ran = []
    monkeypatch.setattr(dedup, "run_dedup", lambda *args: ran.append(args))
    review_tasks.find_near_duplicates(run.pk, job.pk)  # the same message delivered again
    review_tasks.find_near_duplicates(run.pk)  # an old message without its job finds the same one
    assert ran == [] and Job.objects.filter(kind="dedup").count() == 1


@pytest.mark.django_db
def test_a_dedup_run_without_the_encoder_fails_its_job_with_the_reason(monkeypatch, django_capture_on_commit_callbacks):
    from core import roles
    from review import dedup
    from tests.factories import ChangeFactory, UserFactory

    change = ChangeFactory(raw_text="A lamp was placed on the desk.")
    monkeypatch.setattr(dedup, "load_encoder", lambda: None)
    with django_capture_on_commit_callbacks(execute=True):
        run = dedup.start_dedup(change.scene.benchmark, UserFactory(role=roles.ADMIN))
    run.refresh_from_db()
    assert run.job.status == Job.Status.FAILED and "not installed" in run.job.message


# A timer whose callback reloads the page (setTimeout(() => location.reload(), ms) and the like), the
# json_script that set its delay, the module that did it, and meta refresh.
RELOAD_LOOPS = [re.compile(r"set(?:Timeout|Interval)\s*\(.{0,200}?location\.reload", re.S),
                re.compile(r"reload-after-ms|reload-while-working"), re.compile(r'http-equiv="?refresh', re.I)]


def test_no_page_reloads_itself_to_follow_work():
    sources = [*(ROOT / "frontend/templates").rglob("*.html"), *(ROOT / "frontend/static/hypolab").rglob("*.js")]
    assert len(sources) > 20
    offenders = [f"{path.relative_to(ROOT)}: {pattern.pattern}" for path in sources for pattern in RELOAD_LOOPS
                 if pattern.search(path.read_text())]
    assert offenders == []


# The rule for location.reload() in a page script: it may only show the result of a write the page has
# just sent and whose answer it has read, i.e. an `await post(`/`put(`/`del(` at most RELOAD_WINDOW lines
# above it, its answer's `.ok` tested in between, and nothing in between that follows work (a timer, a
# socket or job-state handler, a GET poll). Work that goes on after the answer is a job, which the page
# follows with the job widget (job-progress.js), never by reloading.
RELOAD_WINDOW = 8
SENT_WRITE = re.compile(r"\bawait\s+(?:post|put|del)\(")
FOLLOWS_WORK = re.compile(r"set(?:Timeout|Interval)\(|subscribe\(|onMessage|job:state|WebSocket|\bawait\s+get\(")


def reloads_following_work(text: str) -> list[int]:
    """The lines (1-based) of the reloads that break the rule above."""
    lines = text.splitlines()
    offending = []
    for number, line in enumerate(lines):
        if "location.reload(" not in line:
            continue
        window = lines[max(0, number - RELOAD_WINDOW):number + 1]
        writes = [i for i, text in enumerate(window) if SENT_WRITE.search(text)]
        since_write = "\n".join(window[writes[-1]:]) if writes else ""
        if not writes or ".ok" not in since_write or FOLLOWS_WORK.search(since_write):
            offending.append(number + 1)
    return offending


def test_page_scripts_reload_only_to_show_a_write_they_just_sent():
    scripts = list((ROOT / "frontend/static/hypolab").rglob("*.js"))
    assert len(scripts) > 10
    offenders = {str(path.relative_to(ROOT)): lines for path in scripts
                 if (lines := reloads_following_work(path.read_text()))}
    assert offenders == {}


def test_the_reload_rule_catches_a_page_that_reloads_to_follow_work():
    after_write = "const r = await post(url, body);\nif (r.ok) location.reload(); else show(r);"
    timer = "setTimeout(() => location.reload(), 1500);"
    on_job = 'widget.addEventListener("job:state", (e) => {\n  if (e.detail.status === "done") location.reload();\n});'
    poll = "const r = await get(`/api/v1/releases/${id}/`);\nif (r.ok && r.data.status === 'ready') location.reload();"
    late = "const r = await post(url, body);\nif (r.ok) {\n  setTimeout(() => location.reload(), 2000);\n}"
    unchecked = "await post(url, body);\nlocation.reload();"
    assert reloads_following_work(after_write) == []
    assert [reloads_following_work(text) for text in (timer, on_job, poll, late, unchecked)] == [[1], [2], [2], [3], [2]]
