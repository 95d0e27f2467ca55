from enum import StrEnum

class FieldEnum(StrEnum):
    SOURCE = "source"
    TARGET = "target"

    def __str__(self) -> str:
        return str(self.value)
