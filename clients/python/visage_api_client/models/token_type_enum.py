from enum import StrEnum

class TokenTypeEnum(StrEnum):
    BEARER = "Bearer"

    def __str__(self) -> str:
        return str(self.value)
