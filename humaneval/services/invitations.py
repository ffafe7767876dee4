"""Who may start a study: the admin invites evaluators (an account, or an e-mail address) on the
study's page; an evaluator who is not a crowd participant sees and starts only the studies they were
invited to, a crowd participant only those they entered by the study's own link, an admin any."""

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.db.models import Q

from core import roles
from core.errors import DomainError, NotFound
from crowd import services as crowd_services

from ..models import EvalSession, Study, StudyInvitation

MAX_INVITE_CHARS = 254


def invitations_of(user):
    """The invitations naming `user`: by account, or by the account's e-mail address."""
    named = Q(user_id=user.pk)
    if user.email:
        named |= Q(email__iexact=user.email)
    return StudyInvitation.objects.filter(named)


def is_invited(study_id: int, user) -> bool:
    return invitations_of(user).filter(study_id=study_id).exists()


def invited_open_studies(user):
    """Open studies `user` was invited to, by name."""
    ids = invitations_of(user).values("study_id")
    return Study.objects.filter(pk__in=ids, is_open=True).order_by("name")


def may_see(study: Study, user) -> bool:
    """Whether `user` may start (or resume) `study` from its start page: an admin, a participant who
    already has a session of it, or an invited evaluator who is not a crowd participant."""
    if roles.has_role(user, roles.ADMIN):
        return True
    if EvalSession.objects.filter(study=study, participant=user).exists():
        return True
    return not crowd_services.is_crowd_worker(user) and is_invited(study.pk, user)


@transaction.atomic
def invite(study_id: int, who: str, by=None) -> StudyInvitation:
    """Invite a user name or an e-mail address to the study (again: the same invitation). A name must
    be an account; an address need not have one yet."""
    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        raise NotFound("No such study.", field="study")
    who = (who or "").strip()
    if not who:
        raise DomainError("Type a user name or an e-mail address to invite.", field="invitee")
    if len(who) > MAX_INVITE_CHARS:
        raise DomainError(f"A user name or e-mail address has at most {MAX_INVITE_CHARS} characters.",
                          field="invitee")
    user = get_user_model().objects.filter(username=who).first()
    if user is not None:
        invitation, _ = StudyInvitation.objects.get_or_create(study=study, user=user, defaults={"created_by": by})
        return invitation
    if "@" not in who:
        raise DomainError(f"No account is called {who!r}; type its user name or an e-mail address.",
                          field="invitee")
    try:
        validate_email(who)
    except ValidationError:
        raise DomainError(f"{who!r} is not an e-mail address.", field="invitee") from None
    existing = StudyInvitation.objects.filter(study=study, email__iexact=who).first()
    return existing or StudyInvitation.objects.create(study=study, email=who.lower(), created_by=by)


def withdraw(study_id: int, invitation_id) -> None:
    """Take an invitation back (a session already started stays)."""
    deleted, _ = StudyInvitation.objects.filter(study_id=study_id, pk=invitation_id).delete()
    if not deleted:
        raise NotFound("No such invitation.", field="invitation")
