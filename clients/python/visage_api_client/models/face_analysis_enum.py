from enum import StrEnum

class FaceAnalysisEnum(StrEnum):
    CACHED = "cached"
    COMPUTED = "computed"
    PARTLY_CACHED = "partly cached"

    def __str__(self) -> str:
        return str(self.value)
