from enum import StrEnum

class ResolutionEnum(StrEnum):
    ORIGINAL = "original"
    VALUE_0 = "720p"
    VALUE_1 = "1080p"

    def __str__(self) -> str:
        return str(self.value)
