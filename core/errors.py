"""Errors that services raise: each names the field at fault and the reason in plain words.

The API turns them into a 4xx with `{field: [reason]}`; page views show the reason.
"""


class DomainError(Exception):
    status_code = 400

    def __init__(self, message: str, field: str = "non_field_errors", **extra):
        super().__init__(message)
        self.message = message
        self.field = field
        self.extra = extra

    def as_dict(self) -> dict:
        return {self.field: [self.message], **self.extra}


class Forbidden(DomainError):
    status_code = 403


class NotFound(DomainError):
    status_code = 404


class Conflict(DomainError):
    """A stale write: the caller's version is not the current one."""

    status_code = 409


class IllegalTransition(DomainError):
    status_code = 409
