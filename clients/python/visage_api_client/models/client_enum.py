from enum import StrEnum

class ClientEnum(StrEnum):
    MOBILE = "mobile"
    WEB = "web"

    def __str__(self) -> str:
        return str(self.value)
