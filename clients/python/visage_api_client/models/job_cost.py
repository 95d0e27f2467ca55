from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.cost_state_enum import CostStateEnum
from ..models.mode_enum import ModeEnum
from ..models.unit_enum import UnitEnum
from typing import cast






T = TypeVar("T", bound="JobCost")



@_attrs_define
class JobCost:
    """ What the job costs, from the ledger (billing.selectors.job_cost).

        Attributes:
            state (CostStateEnum): * `reserved` - reserved
                * `paid` - paid
                * `released` - released
                * `refunded` - refunded
            sentence (str): The money in one plain sentence.
            currency (str):
            unit (UnitEnum): * `credits` - credits
            minor_unit_exponent (int):
            quoted (str): Decimal string in the currency's minor unit, e.g. '6.75'
            quoted_minor (int):
            price (str): Decimal string in the currency's minor unit, e.g. '6.75'
            held (str): Decimal string in the currency's minor unit, e.g. '6.75'
            paid (None | str): Decimal string in the currency's minor unit, e.g. '6.75'
            paid_minor (int | None):
            charge (None | str): The older name of `paid`.
            released (str): Decimal string in the currency's minor unit, e.g. '6.75'
            refunded (None | str): Decimal string in the currency's minor unit, e.g. '6.75'
            refunded_minor (int | None):
            capped (bool | None): The charge was capped at the quoted price.
            mode_charged (ModeEnum | None):
            mode_requested (ModeEnum | None):
            frames (int | None):
            resolution_coefficient (None | str):
            mode_weight (None | str):
            gpu_seconds (None | str):
            gpu_seconds_estimate (None | str):
            gpu_seconds_per_frame (None | str):
            formula_amount (None | str): Decimal string in the currency's minor unit, e.g. '6.75'
            wall_seconds (None | str):
            unit_price (None | str):
     """

    state: CostStateEnum
    sentence: str
    currency: str
    unit: UnitEnum
    minor_unit_exponent: int
    quoted: str
    quoted_minor: int
    price: str
    held: str
    paid: None | str
    paid_minor: int | None
    charge: None | str
    released: str
    refunded: None | str
    refunded_minor: int | None
    capped: bool | None
    mode_charged: ModeEnum | None
    mode_requested: ModeEnum | None
    frames: int | None
    resolution_coefficient: None | str
    mode_weight: None | str
    gpu_seconds: None | str
    gpu_seconds_estimate: None | str
    gpu_seconds_per_frame: None | str
    formula_amount: None | str
    wall_seconds: None | str
    unit_price: None | str





    def to_dict(self) -> dict[str, Any]:
        state = self.state.value

        sentence = self.sentence

        currency = self.currency

        unit = self.unit.value

        minor_unit_exponent = self.minor_unit_exponent

        quoted = self.quoted

        quoted_minor = self.quoted_minor

        price = self.price

        held = self.held

        paid: None | str
        paid = self.paid

        paid_minor: int | None
        paid_minor = self.paid_minor

        charge: None | str
        charge = self.charge

        released = self.released

        refunded: None | str
        refunded = self.refunded

        refunded_minor: int | None
        refunded_minor = self.refunded_minor

        capped: bool | None
        capped = self.capped

        mode_charged: None | str
        if isinstance(self.mode_charged, ModeEnum):
            mode_charged = self.mode_charged.value
        else:
            mode_charged = self.mode_charged

        mode_requested: None | str
        if isinstance(self.mode_requested, ModeEnum):
            mode_requested = self.mode_requested.value
        else:
            mode_requested = self.mode_requested

        frames: int | None
        frames = self.frames

        resolution_coefficient: None | str
        resolution_coefficient = self.resolution_coefficient

        mode_weight: None | str
        mode_weight = self.mode_weight

        gpu_seconds: None | str
        gpu_seconds = self.gpu_seconds

        gpu_seconds_estimate: None | str
        gpu_seconds_estimate = self.gpu_seconds_estimate

        gpu_seconds_per_frame: None | str
        gpu_seconds_per_frame = self.gpu_seconds_per_frame

        formula_amount: None | str
        formula_amount = self.formula_amount

        wall_seconds: None | str
        wall_seconds = self.wall_seconds

        unit_price: None | str
        unit_price = self.unit_price


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "state": state,
            "sentence": sentence,
            "currency": currency,
            "unit": unit,
            "minor_unit_exponent": minor_unit_exponent,
            "quoted": quoted,
            "quoted_minor": quoted_minor,
            "price": price,
            "held": held,
            "paid": paid,
            "paid_minor": paid_minor,
            "charge": charge,
            "released": released,
            "refunded": refunded,
            "refunded_minor": refunded_minor,
            "capped": capped,
            "mode_charged": mode_charged,
            "mode_requested": mode_requested,
            "frames": frames,
            "resolution_coefficient": resolution_coefficient,
            "mode_weight": mode_weight,
            "gpu_seconds": gpu_seconds,
            "gpu_seconds_estimate": gpu_seconds_estimate,
            "gpu_seconds_per_frame": gpu_seconds_per_frame,
            "formula_amount": formula_amount,
            "wall_seconds": wall_seconds,
            "unit_price": unit_price,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        state = CostStateEnum(d.pop("state"))




        sentence = d.pop("sentence")

        currency = d.pop("currency")

        unit = UnitEnum(d.pop("unit"))




        minor_unit_exponent = d.pop("minor_unit_exponent")

        quoted = d.pop("quoted")

        quoted_minor = d.pop("quoted_minor")

        price = d.pop("price")

        held = d.pop("held")

        def _parse_paid(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        paid = _parse_paid(d.pop("paid"))


        def _parse_paid_minor(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        paid_minor = _parse_paid_minor(d.pop("paid_minor"))


        def _parse_charge(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        charge = _parse_charge(d.pop("charge"))


        released = d.pop("released")

        def _parse_refunded(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        refunded = _parse_refunded(d.pop("refunded"))


        def _parse_refunded_minor(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        refunded_minor = _parse_refunded_minor(d.pop("refunded_minor"))


        def _parse_capped(data: object) -> bool | None:
            if data is None:
                return data
            return cast(bool | None, data)

        capped = _parse_capped(d.pop("capped"))


        def _parse_mode_charged(data: object) -> ModeEnum | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                mode_charged_type_0 = ModeEnum(data)



                return mode_charged_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ModeEnum | None, data)

        mode_charged = _parse_mode_charged(d.pop("mode_charged"))


        def _parse_mode_requested(data: object) -> ModeEnum | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                mode_requested_type_0 = ModeEnum(data)



                return mode_requested_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ModeEnum | None, data)

        mode_requested = _parse_mode_requested(d.pop("mode_requested"))


        def _parse_frames(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        frames = _parse_frames(d.pop("frames"))


        def _parse_resolution_coefficient(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        resolution_coefficient = _parse_resolution_coefficient(d.pop("resolution_coefficient"))


        def _parse_mode_weight(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        mode_weight = _parse_mode_weight(d.pop("mode_weight"))


        def _parse_gpu_seconds(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        gpu_seconds = _parse_gpu_seconds(d.pop("gpu_seconds"))


        def _parse_gpu_seconds_estimate(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        gpu_seconds_estimate = _parse_gpu_seconds_estimate(d.pop("gpu_seconds_estimate"))


        def _parse_gpu_seconds_per_frame(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        gpu_seconds_per_frame = _parse_gpu_seconds_per_frame(d.pop("gpu_seconds_per_frame"))


        def _parse_formula_amount(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        formula_amount = _parse_formula_amount(d.pop("formula_amount"))


        def _parse_wall_seconds(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        wall_seconds = _parse_wall_seconds(d.pop("wall_seconds"))


        def _parse_unit_price(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        unit_price = _parse_unit_price(d.pop("unit_price"))


        job_cost = cls(
            state=state,
            sentence=sentence,
            currency=currency,
            unit=unit,
            minor_unit_exponent=minor_unit_exponent,
            quoted=quoted,
            quoted_minor=quoted_minor,
            price=price,
            held=held,
            paid=paid,
            paid_minor=paid_minor,
            charge=charge,
            released=released,
            refunded=refunded,
            refunded_minor=refunded_minor,
            capped=capped,
            mode_charged=mode_charged,
            mode_requested=mode_requested,
            frames=frames,
            resolution_coefficient=resolution_coefficient,
            mode_weight=mode_weight,
            gpu_seconds=gpu_seconds,
            gpu_seconds_estimate=gpu_seconds_estimate,
            gpu_seconds_per_frame=gpu_seconds_per_frame,
            formula_amount=formula_amount,
            wall_seconds=wall_seconds,
            unit_price=unit_price,
        )

        return job_cost

