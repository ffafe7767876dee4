"""Status history: every status a row of a stateful model (a StatusTransitions model) is created with
and every change of it is one row of core.models.StatusChange, never updated or deleted.

Database triggers write it (SQL in core/sql.py, installed by a TrackStatusHistory operation in each
app's migrations), because statuses change along three paths: `move_to` and save, bulk
`.update(status=...)`, and hand-written SQL on the hot paths. A trigger sees all three and adds no
round trip to a request. The actor is the signed-in user whose request wrote the statement
(ActorMiddleware); background work (tasks, the reaper, commands) leaves it empty."""

from contextvars import ContextVar

from django.apps import apps
from django.db import connection, connections
from django.db.migrations.operations.base import Operation
from django.db.models import Model, QuerySet
from django.utils.functional import SimpleLazyObject, empty

from core import sql
from core.models import StatusChange
from core.status import StatusTransitions


def tracked_models() -> list[type[Model]]:
    """Every model whose status moves through StatusTransitions: each keeps a history."""
    return [model for model in apps.get_models() if issubclass(model, StatusTransitions)]


def tracked_model(model_name: str) -> type[Model] | None:
    """The tracked model called `model_name` (e.g. 'assignment'), or None."""
    return next((model for model in tracked_models() if model._meta.model_name == model_name), None)


def changes_of(model: type[Model], row_id: int) -> QuerySet[StatusChange]:
    """A row's history, oldest first, with the actors."""
    return StatusChange.objects.filter(model=model._meta.label_lower, row_id=row_id).select_related("actor")


# --- writing: the triggers ------------------------------------------------------------------------


class TrackStatusHistory(Operation):
    """Migration operation: the model's table records its status history (core/sql.py triggers)."""

    reversible = True
    reduces_to_sql = True

    def __init__(self, model_name: str):
        self.model_name = model_name

    def deconstruct(self):
        return self.__class__.__name__, [self.model_name], {}

    def state_forwards(self, app_label, state):
        pass  # triggers are no part of the models' state

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        model = to_state.apps.get_model(app_label, self.model_name)
        for statement in sql.create_status_triggers(schema_editor.connection.vendor, model._meta.db_table,
                                                    model._meta.label_lower, schema_editor.quote_name):
            schema_editor.execute(statement, None)  # None: the SQL's % signs are not placeholders

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        model = from_state.apps.get_model(app_label, self.model_name)
        for statement in sql.drop_status_triggers(schema_editor.connection.vendor, model._meta.db_table,
                                                  schema_editor.quote_name):
            schema_editor.execute(statement, None)

    def describe(self):
        return f"Record the status history of {self.model_name}"


class UntrackStatusHistory(TrackStatusHistory):
    """Migration operation: the model's table stops recording (its status moved elsewhere, e.g. to its
    core.Job); run it before the status column goes. The history it wrote is kept."""

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        super().database_backwards(app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        super().database_forwards(app_label, schema_editor, from_state, to_state)

    def describe(self):
        return f"Stop recording the status history of {self.model_name}"


def reinstall_sqlite_triggers(using: str, **kwargs) -> None:
    """post_migrate: SQLite alters a table by copying it into a new one, which drops its triggers;
    put back any a later migration of a tracked model removed."""
    db = connections[using]
    existing = set(db.introspection.table_names()) if db.vendor == "sqlite" else set()
    if StatusChange._meta.db_table not in existing:
        return
    tables = {model._meta.db_table: model for model in tracked_models() if model._meta.db_table in existing}
    present = sql.status_triggers_present(list(tables))
    with db.schema_editor() as editor:
        for table, model in tables.items():
            if not set(sql.status_trigger_names(table)) <= present:
                for statement in sql.create_status_triggers(db.vendor, table, model._meta.label_lower, editor.quote_name):
                    editor.execute(statement, None)


# --- the actor --------------------------------------------------------------------------------------

# SQLite's triggers call hypolab_actor(), a Python function registered on each connection, which reads
# this; PostgreSQL's read the comment ActorMiddleware appends to the statement.
_sqlite_actor: ContextVar[int | None] = ContextVar("status_history_actor", default=None)


def register_sqlite_actor(sender, connection, **kwargs) -> None:
    """connection_created: the function SQLite's history triggers call."""
    if connection.vendor == "sqlite":
        connection.connection.create_function("hypolab_actor", 0, _sqlite_actor.get)


def _signed_in_id(request) -> int | None:
    user = getattr(request, "user", None)  # DRF sets it here once it has authenticated
    if isinstance(user, SimpleLazyObject) and user._wrapped is empty:
        return None  # nobody has asked who it is yet: asking here could cost a query
    return user.pk if user is not None and user.is_authenticated else None


class _NameActor:
    """execute_wrapper: each statement of the request carries the signed-in user's id to the triggers."""

    def __init__(self, request):
        self.request = request

    def __call__(self, execute, statement, params, many, context):
        actor = _signed_in_id(self.request)
        if actor is None:
            return execute(statement, params, many, context)
        if context["connection"].vendor == "postgresql":
            return execute(sql.with_actor(statement, actor), params, many, context)
        token = _sqlite_actor.set(actor)
        try:
            return execute(statement, params, many, context)
        finally:
            _sqlite_actor.reset(token)


class ActorMiddleware:
    """Writes made while answering a request are recorded in the status history with its user."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        # Every method: an evaluator's GET of the current item may finish the session.
        with connection.execute_wrapper(_NameActor(request)):
            return self.get_response(request)
