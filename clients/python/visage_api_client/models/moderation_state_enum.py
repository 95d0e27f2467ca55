from enum import StrEnum

class ModerationStateEnum(StrEnum):
    IN_REVIEW = "in_review"
    NOT_SCREENED = "not_screened"
    PASSED = "passed"
    PENDING = "pending"
    REJECTED = "rejected"

    def __str__(self) -> str:
        return str(self.value)
