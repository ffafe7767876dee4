"""What pages read of studies, sessions and invitations: querysets and small typed results."""

from dataclasses import dataclass

from django.db.models import Count, Q

from crowd import services as crowd_services
from crowd.models import CrowdPlatform, PlatformSubmission, scope_key

from .models import EvalSession, ItemRole, Response, SessionItem, Study


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


@dataclass
class SessionCounts:
    started: int = 0  # every session begun, finished or not
    finished: int = 0


def session_counts_by_benchmark(ids) -> dict[int, SessionCounts]:
    """Benchmark id -> its studies' sessions begun and finished (benchmarks with none are absent), in one query."""
    rows = (EvalSession.objects.filter(study__benchmark__in=ids).values("study__benchmark")
            .annotate(started=Count("id"), finished=Count("id", filter=Q(status=EvalSession.Status.FINISHED))))
    return {row["study__benchmark"]: SessionCounts(row["started"], row["finished"]) for row in rows}


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


@dataclass
class EntryChecks:
    """The study's entry rule and what it caught, for its settings page: the platform its links must come
    from (`platform`: "prolific", "generic" or None for any), the Prolific entries Prolific's API did not
    confirm, and the sessions flagged (session id, why), which hold no place and count in no result."""

    platform: str | None
    api: bool
    unverified: int
    flagged: list[tuple[int, str]]
    late_onsets: int = 0  # answers left out of the results: their onset came later than the stimulus needs
    declared: str = ""  # the study's own choice ("" automatic)
    prolific_ids: tuple[str, ...] = ()  # the Prolific studies its STUDY_ID must be one of


def entry_checks(study) -> EntryChecks:
    scope = scope_key("study", study.pk)
    rule = crowd_services.entry_rule(scope, study.platform)
    unverified = PlatformSubmission.objects.filter(scope=scope, platform=CrowdPlatform.PROLIFIC,
                                                   verified=False).count()
    flagged = list(EvalSession.objects.filter(study=study).exclude(flagged="").order_by("pk")
                   .values_list("pk", "flagged"))
    late_onsets = Response.objects.filter(session__study=study, late_onset=True).count()
    return EntryChecks(rule.platform, rule.api, unverified, flagged, late_onsets, study.platform, rule.study_ids)
