from __future__ import annotations

from django.db import models


class MediaKind(models.TextChoices):
    IMAGE = "image"
    VIDEO = "video"
