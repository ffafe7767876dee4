"""What pages read of studies, sessions and invitations: querysets and small typed results."""

from dataclasses import dataclass

from django.db.models import Count

from .models import EvalSession, ItemRole, SessionItem, Study


def open_studies():
    return Study.objects.filter(is_open=True).select_related("benchmark").order_by("name")


def studies_with_benchmark():
    """Studies with their benchmark, for a lookup by id."""
    return Study.objects.select_related("benchmark")


def studies_of(benchmark, oldest_first: bool = False):
    """The benchmark's studies, newest first (the manage page) or oldest first (the planner's list)."""
    studies = Study.objects.filter(benchmark=benchmark)
    return studies.order_by("created_at", "pk") if oldest_first else studies.order_by("-created_at")


def study_counts_by_benchmark(ids) -> dict[int, int]:
    """Benchmark id -> how many studies it has (benchmarks with none are absent), in one query."""
    return dict(Study.objects.filter(benchmark__in=ids).values_list("benchmark").annotate(n=Count("id")))


def sessions_of(user) -> list:
    """The evaluator's sessions with their study, newest first."""
    return list(EvalSession.objects.filter(participant=user).select_related("study").order_by("-started_at"))


def invitations_of(study):
    return study.invitations.select_related("user").order_by("created_at")


@dataclass
class SessionSize:
    practice: int  # familiarisation items, answered first
    questions: int  # the rest


def session_size(session) -> SessionSize:
    by_role = dict(SessionItem.objects.filter(session=session).values_list("role").annotate(n=Count("id")))
    practice = by_role.get(ItemRole.FAMILIARISATION, 0)
    return SessionSize(practice=practice, questions=sum(by_role.values()) - practice)
