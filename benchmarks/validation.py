"""Input checks shared by every stage's services: they raise DomainError naming the field."""

from .errors import DomainError


def whole_number(value, field: str, low: int, high: int, *, optional: bool = False) -> int | None:
    """`value` as an int within [low, high]; None for an empty optional value."""
    if optional and value in (None, ""):
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise DomainError("Must be a whole number.", field=field) from None
    if not low <= number <= high:
        raise DomainError(f"Must be between {low} and {high}.", field=field)
    return number
