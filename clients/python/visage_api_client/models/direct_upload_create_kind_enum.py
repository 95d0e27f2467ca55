from enum import StrEnum

class DirectUploadCreateKindEnum(StrEnum):
    IMAGE = "image"
    VIDEO = "video"

    def __str__(self) -> str:
        return str(self.value)
