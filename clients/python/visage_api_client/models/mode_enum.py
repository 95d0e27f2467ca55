from enum import StrEnum

class ModeEnum(StrEnum):
    FAST = "fast"
    HQ = "hq"
    STANDARD = "standard"

    def __str__(self) -> str:
        return str(self.value)
