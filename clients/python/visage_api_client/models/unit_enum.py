from enum import StrEnum

class UnitEnum(StrEnum):
    CREDITS = "credits"

    def __str__(self) -> str:
        return str(self.value)
