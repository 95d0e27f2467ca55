from enum import StrEnum

class JobsRetrieveUntil(StrEnum):
    FINAL = "final"

    def __str__(self) -> str:
        return str(self.value)
