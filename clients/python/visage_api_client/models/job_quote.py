from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset






T = TypeVar("T", bound="JobQuote")



@_attrs_define
class JobQuote:
    """ The price as quoted at submit (see POST /api/v1/quotes); older jobs lack the newer members.

        Attributes:
            frames (int | Unset):
            processed_width (int | Unset):
            processed_height (int | Unset):
            mode (str | Unset):
            resolution (str | Unset):
            resolution_coefficient (str | Unset): Decimal string
            mode_weight (str | Unset): Decimal string
            gpu_seconds_per_frame_estimate (str | Unset): Decimal string
            gpu_seconds_estimate (str | Unset): Decimal string
            unit_price (str | Unset): Decimal string
            minimum_charge (str | Unset): Decimal string in the currency's minor unit, e.g. '6.75'
            amount (str | Unset): Decimal string in the currency's minor unit, e.g. '6.75'
            hold_amount (str | Unset): Decimal string in the currency's minor unit, e.g. '6.75'
            currency (str | Unset):
            queue (str | Unset):
            plan (str | Unset):
            mode_requested (str | Unset):
            kind (str | Unset):
            pixel_class (str | Unset):
            minor_unit_exponent (int | Unset):
            amount_minor (int | Unset):
            scaled (bool | Unset):
     """

    frames: int | Unset = UNSET
    processed_width: int | Unset = UNSET
    processed_height: int | Unset = UNSET
    mode: str | Unset = UNSET
    resolution: str | Unset = UNSET
    resolution_coefficient: str | Unset = UNSET
    mode_weight: str | Unset = UNSET
    gpu_seconds_per_frame_estimate: str | Unset = UNSET
    gpu_seconds_estimate: str | Unset = UNSET
    unit_price: str | Unset = UNSET
    minimum_charge: str | Unset = UNSET
    amount: str | Unset = UNSET
    hold_amount: str | Unset = UNSET
    currency: str | Unset = UNSET
    queue: str | Unset = UNSET
    plan: str | Unset = UNSET
    mode_requested: str | Unset = UNSET
    kind: str | Unset = UNSET
    pixel_class: str | Unset = UNSET
    minor_unit_exponent: int | Unset = UNSET
    amount_minor: int | Unset = UNSET
    scaled: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        frames = self.frames

        processed_width = self.processed_width

        processed_height = self.processed_height

        mode = self.mode

        resolution = self.resolution

        resolution_coefficient = self.resolution_coefficient

        mode_weight = self.mode_weight

        gpu_seconds_per_frame_estimate = self.gpu_seconds_per_frame_estimate

        gpu_seconds_estimate = self.gpu_seconds_estimate

        unit_price = self.unit_price

        minimum_charge = self.minimum_charge

        amount = self.amount

        hold_amount = self.hold_amount

        currency = self.currency

        queue = self.queue

        plan = self.plan

        mode_requested = self.mode_requested

        kind = self.kind

        pixel_class = self.pixel_class

        minor_unit_exponent = self.minor_unit_exponent

        amount_minor = self.amount_minor

        scaled = self.scaled


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
        })
        if frames is not UNSET:
            field_dict["frames"] = frames
        if processed_width is not UNSET:
            field_dict["processed_width"] = processed_width
        if processed_height is not UNSET:
            field_dict["processed_height"] = processed_height
        if mode is not UNSET:
            field_dict["mode"] = mode
        if resolution is not UNSET:
            field_dict["resolution"] = resolution
        if resolution_coefficient is not UNSET:
            field_dict["resolution_coefficient"] = resolution_coefficient
        if mode_weight is not UNSET:
            field_dict["mode_weight"] = mode_weight
        if gpu_seconds_per_frame_estimate is not UNSET:
            field_dict["gpu_seconds_per_frame_estimate"] = gpu_seconds_per_frame_estimate
        if gpu_seconds_estimate is not UNSET:
            field_dict["gpu_seconds_estimate"] = gpu_seconds_estimate
        if unit_price is not UNSET:
            field_dict["unit_price"] = unit_price
        if minimum_charge is not UNSET:
            field_dict["minimum_charge"] = minimum_charge
        if amount is not UNSET:
            field_dict["amount"] = amount
        if hold_amount is not UNSET:
            field_dict["hold_amount"] = hold_amount
        if currency is not UNSET:
            field_dict["currency"] = currency
        if queue is not UNSET:
            field_dict["queue"] = queue
        if plan is not UNSET:
            field_dict["plan"] = plan
        if mode_requested is not UNSET:
            field_dict["mode_requested"] = mode_requested
        if kind is not UNSET:
            field_dict["kind"] = kind
        if pixel_class is not UNSET:
            field_dict["pixel_class"] = pixel_class
        if minor_unit_exponent is not UNSET:
            field_dict["minor_unit_exponent"] = minor_unit_exponent
        if amount_minor is not UNSET:
            field_dict["amount_minor"] = amount_minor
        if scaled is not UNSET:
            field_dict["scaled"] = scaled

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        frames = d.pop("frames", UNSET)

        processed_width = d.pop("processed_width", UNSET)

        processed_height = d.pop("processed_height", UNSET)

        mode = d.pop("mode", UNSET)

        resolution = d.pop("resolution", UNSET)

        resolution_coefficient = d.pop("resolution_coefficient", UNSET)

        mode_weight = d.pop("mode_weight", UNSET)

        gpu_seconds_per_frame_estimate = d.pop("gpu_seconds_per_frame_estimate", UNSET)

        gpu_seconds_estimate = d.pop("gpu_seconds_estimate", UNSET)

        unit_price = d.pop("unit_price", UNSET)

        minimum_charge = d.pop("minimum_charge", UNSET)

        amount = d.pop("amount", UNSET)

        hold_amount = d.pop("hold_amount", UNSET)

        currency = d.pop("currency", UNSET)

        queue = d.pop("queue", UNSET)

        plan = d.pop("plan", UNSET)

        mode_requested = d.pop("mode_requested", UNSET)

        kind = d.pop("kind", UNSET)

        pixel_class = d.pop("pixel_class", UNSET)

        minor_unit_exponent = d.pop("minor_unit_exponent", UNSET)

        amount_minor = d.pop("amount_minor", UNSET)

        scaled = d.pop("scaled", UNSET)

        job_quote = cls(
            frames=frames,
            processed_width=processed_width,
            processed_height=processed_height,
            mode=mode,
            resolution=resolution,
            resolution_coefficient=resolution_coefficient,
            mode_weight=mode_weight,
            gpu_seconds_per_frame_estimate=gpu_seconds_per_frame_estimate,
            gpu_seconds_estimate=gpu_seconds_estimate,
            unit_price=unit_price,
            minimum_charge=minimum_charge,
            amount=amount,
            hold_amount=hold_amount,
            currency=currency,
            queue=queue,
            plan=plan,
            mode_requested=mode_requested,
            kind=kind,
            pixel_class=pixel_class,
            minor_unit_exponent=minor_unit_exponent,
            amount_minor=amount_minor,
            scaled=scaled,
        )


        job_quote.additional_properties = d
        return job_quote

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
