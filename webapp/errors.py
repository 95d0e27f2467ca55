"""Domain errors the API turns into problem+json (see webapp/api/problems.py)."""

from __future__ import annotations


class JobError(Exception):
    code = "job_error"
    status = 400

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class IdempotencyKeyMismatch(JobError):
    code = "idempotency_key_mismatch"
    status = 422


class JobNotCancelable(JobError):
    code = "job_not_cancelable"
    status = 409


class InvalidOption(JobError):
    code = "invalid_option"
