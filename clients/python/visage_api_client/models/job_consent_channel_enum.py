from enum import StrEnum

class JobConsentChannelEnum(StrEnum):
    API = "api"
    SITE = "site"

    def __str__(self) -> str:
        return str(self.value)
