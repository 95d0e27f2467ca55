from enum import StrEnum

class ChannelEnum(StrEnum):
    API = "api"
    SITE = "site"

    def __str__(self) -> str:
        return str(self.value)
