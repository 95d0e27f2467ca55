from enum import StrEnum

class JobStateEnum(StrEnum):
    CANCELED = "canceled"
    CREATED = "created"
    FAILED = "failed"
    QUEUED = "queued"
    REJECTED = "rejected"
    REVIEW = "review"
    RUNNING = "running"
    SCREENING = "screening"
    SUCCEEDED = "succeeded"

    def __str__(self) -> str:
        return str(self.value)
