from enum import StrEnum

class LedgerEntryKindEnum(StrEnum):
    ADJUSTMENT = "adjustment"
    CAPTURE = "capture"
    HOLD = "hold"
    PURCHASE = "purchase"
    REFUND = "refund"
    RELEASE = "release"
    REVERSAL = "reversal"
    TOP_UP = "top_up"

    def __str__(self) -> str:
        return str(self.value)
