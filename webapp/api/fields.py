"""Input fields stricter than DRF's defaults, where the schema's type must hold on the wire."""

from __future__ import annotations

from rest_framework import serializers


class TextField(serializers.CharField):
    """A JSON string, nothing else: DRF's CharField turns 0 into "0", so a client sending a number
    where the schema says string got a 2xx instead of the 400 it is owed (schemathesis ST201).
    Form posts carry only strings, so this changes nothing for them. The error is CharField's own
    "Not a valid string." (DRF ships it translated, zh-Hans included)."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)
