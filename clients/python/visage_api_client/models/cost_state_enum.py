from enum import StrEnum

class CostStateEnum(StrEnum):
    PAID = "paid"
    REFUNDED = "refunded"
    RELEASED = "released"
    RESERVED = "reserved"

    def __str__(self) -> str:
        return str(self.value)
