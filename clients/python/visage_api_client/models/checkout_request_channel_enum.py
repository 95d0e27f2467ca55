from enum import StrEnum

class CheckoutRequestChannelEnum(StrEnum):
    APP = "app"
    PAGE = "page"

    def __str__(self) -> str:
        return str(self.value)
