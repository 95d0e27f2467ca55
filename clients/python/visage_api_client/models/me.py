from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast






T = TypeVar("T", bound="Me")



@_attrs_define
class Me:
    """ 
        Attributes:
            username (str):
            email (str):
            balance (str): Decimal string in the currency's minor unit, e.g. '499.95'
            held (str): Credits held for unfinished jobs
            available (str): balance − held: what a new job can hold
            currency (str):
            plan (str):
     """

    username: str
    email: str
    balance: str
    held: str
    available: str
    currency: str
    plan: str





    def to_dict(self) -> dict[str, Any]:
        username = self.username

        email: str
        email = self.email

        balance = self.balance

        held = self.held

        available = self.available

        currency = self.currency

        plan = self.plan


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "username": username,
            "email": email,
            "balance": balance,
            "held": held,
            "available": available,
            "currency": currency,
            "plan": plan,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        username = d.pop("username")

        def _parse_email(data: object) -> str:
            return cast(str, data)

        email = _parse_email(d.pop("email"))


        balance = d.pop("balance")

        held = d.pop("held")

        available = d.pop("available")

        currency = d.pop("currency")

        plan = d.pop("plan")

        me = cls(
            username=username,
            email=email,
            balance=balance,
            held=held,
            available=available,
            currency=currency,
            plan=plan,
        )

        return me

