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
