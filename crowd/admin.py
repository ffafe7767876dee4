from django.contrib import admin, messages

from core.errors import DomainError

from . import squatting
from .models import BlockedWorker, CrowdWorker, SessionConflict, WebhookEvent

admin.site.register(
    CrowdWorker, list_display=["worker_id", "platform", "study_id", "session_id", "user"],
    search_fields=["worker_id"],
)

admin.site.register(
    BlockedWorker, list_display=["worker_id", "platform", "scope", "reason", "created_at"],
    search_fields=["worker_id", "scope"],
)

admin.site.register(WebhookEvent, list_display=["platform", "event_id", "received_at"])


@admin.register(SessionConflict)
class SessionConflictAdmin(admin.ModelAdmin):
    """A worker id already bound to another session (crowd.squatting): release or reassign it."""

    list_display = ["pk", "worker_id", "platform", "bound_session_id", "refused_session_id", "scope", "attempts",
                    "created_at", "resolution"]
    list_filter = ["resolution", "platform"]
    search_fields = ["worker_id", "bound_session_id", "refused_session_id"]
    readonly_fields = [f.name for f in SessionConflict._meta.fields]
    actions = ["release_binding", "reassign_to_refused"]

    def _each(self, request, queryset, resolve, done: str):
        for conflict in queryset:
            try:
                resolve(conflict.pk, by=request.user)
            except DomainError as exc:
                self.message_user(request, f"#{conflict.pk}: {exc.message}", messages.WARNING)
            else:
                self.message_user(request, f"#{conflict.pk} ({conflict.worker_id}): {done}", messages.SUCCESS)

    @admin.action(description="Release the binding (the same person: their next link signs in)")
    def release_binding(self, request, queryset):
        self._each(request, queryset, squatting.release, "released; the participant's next link signs in.")

    @admin.action(description="Reassign the id to the refused session (detach and switch off the first account)")
    def reassign_to_refused(self, request, queryset):
        self._each(request, queryset, squatting.reassign, "reassigned; the refused link makes a new account.")

    def has_add_permission(self, request):
        return False
