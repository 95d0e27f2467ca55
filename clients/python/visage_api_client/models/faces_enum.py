from enum import StrEnum

class FacesEnum(StrEnum):
    MANY = "many"
    ONE = "one"
    REFERENCE = "reference"

    def __str__(self) -> str:
        return str(self.value)
