"""A number where the schema says string is a 400, not a string made from it (schemathesis ST201)."""

from __future__ import annotations

import pytest
from django.utils import translation
from rest_framework.exceptions import ValidationError

from webapp.api.fields import TextField


def test_a_number_is_not_a_string():
    field = TextField(max_length=10)
    assert field.run_validation("ana") == "ana"
    for wrong in (0, 1.5, True, ["a"], {"a": 1}):
        with pytest.raises(ValidationError, match="Not a valid string"):
            field.run_validation(wrong)


def test_the_message_speaks_the_callers_language():
    with translation.override("zh-hans"), pytest.raises(ValidationError) as raised:
        TextField().run_validation(0)
    message = str(raised.value.detail[0])
    assert "Not a valid string" not in message and "字符串" in message, message
