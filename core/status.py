"""Explicit status transitions: every model with a `status` moves through `move_to`."""

from core.errors import IllegalTransition


class StatusTransitions:
    """Mixin: subclasses declare TRANSITIONS = {from_status: {to_status, ...}}."""

    TRANSITIONS: dict[str, set[str]] = {}

    def move_to(self, new_status: str) -> None:
        allowed = self.TRANSITIONS.get(self.status, set())
        if new_status not in allowed:
            raise IllegalTransition(
                f"{type(self).__name__} cannot go from '{self.status}' to '{new_status}'.", field="status"
            )
        self.status = new_status

    @classmethod
    def move_all(cls, rows, new_status: str) -> int:
        """`move_to` for many rows in one statement: the rows of the queryset whose status may go to
        `new_status` move (the others stay as they are); returns how many moved. The history triggers
        record each row's change as they do a save's."""
        sources = [status for status, allowed in cls.TRANSITIONS.items() if new_status in allowed]
        return rows.filter(status__in=sources).update(status=new_status)
