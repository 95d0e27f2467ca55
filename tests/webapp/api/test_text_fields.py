"""A number where the schema says string is a 400, not a string made from it (schemathesis ST201)."""

from __future__ import annotations

import pytest
from rest_framework.exceptions import ValidationError

from webapp.api.fields import TextField


def test_a_number_is_not_a_string():
    field = TextField(max_length=10)
    assert field.run_validation("ana") == "ana"
    for wrong in (0, 1.5, True, ["a"], {"a": 1}):
        with pytest.raises(ValidationError, match="Not a string"):
            field.run_validation(wrong)
