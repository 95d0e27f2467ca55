from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.mode_enum import ModeEnum
from ..models.resolution_enum import ResolutionEnum
from typing import cast

if TYPE_CHECKING:
  from ..models.quote_links import QuoteLinks
  from ..models.quote_target import QuoteTarget





T = TypeVar("T", bound="Quote")



@_attrs_define
class Quote:
    """ 
        Attributes:
            frames (int):
            kind (str):
            processed_width (int):
            processed_height (int):
            mode (ModeEnum): * `fast` - Fast
                * `standard` - Standard
                * `hq` - High quality
            mode_requested (ModeEnum): * `fast` - Fast
                * `standard` - Standard
                * `hq` - High quality
            resolution (ResolutionEnum): * `720p` - 720p
                * `1080p` - 1080p
                * `original` - Original
            resolution_coefficient (str):
            mode_weight (str):
            gpu_seconds_per_frame_estimate (str):
            gpu_seconds_estimate (str):
            unit_price (str):
            minimum_charge (str):
            amount (str): The price: the most this job will cost.
            amount_minor (int): The price in the currency's minor unit.
            hold_amount (str): Set aside at submit: equal to the price (kept for older clients).
            currency (str):
            queue (str): The GPU queue the job will run on.
            available (str): The caller's available credit now.
            sufficient (bool): Whether the available credit covers the price.
            target (QuoteTarget):
            links (QuoteLinks):
     """

    frames: int
    kind: str
    processed_width: int
    processed_height: int
    mode: ModeEnum
    mode_requested: ModeEnum
    resolution: ResolutionEnum
    resolution_coefficient: str
    mode_weight: str
    gpu_seconds_per_frame_estimate: str
    gpu_seconds_estimate: str
    unit_price: str
    minimum_charge: str
    amount: str
    amount_minor: int
    hold_amount: str
    currency: str
    queue: str
    available: str
    sufficient: bool
    target: QuoteTarget
    links: QuoteLinks





    def to_dict(self) -> dict[str, Any]:
        from ..models.quote_links import QuoteLinks # noqa: PLC0415
        from ..models.quote_target import QuoteTarget # noqa: PLC0415
        frames = self.frames

        kind = self.kind

        processed_width = self.processed_width

        processed_height = self.processed_height

        mode = self.mode.value

        mode_requested = self.mode_requested.value

        resolution = self.resolution.value

        resolution_coefficient = self.resolution_coefficient

        mode_weight = self.mode_weight

        gpu_seconds_per_frame_estimate = self.gpu_seconds_per_frame_estimate

        gpu_seconds_estimate = self.gpu_seconds_estimate

        unit_price = self.unit_price

        minimum_charge = self.minimum_charge

        amount = self.amount

        amount_minor = self.amount_minor

        hold_amount = self.hold_amount

        currency = self.currency

        queue = self.queue

        available = self.available

        sufficient = self.sufficient

        target = self.target.to_dict()

        links = self.links.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "frames": frames,
            "kind": kind,
            "processed_width": processed_width,
            "processed_height": processed_height,
            "mode": mode,
            "mode_requested": mode_requested,
            "resolution": resolution,
            "resolution_coefficient": resolution_coefficient,
            "mode_weight": mode_weight,
            "gpu_seconds_per_frame_estimate": gpu_seconds_per_frame_estimate,
            "gpu_seconds_estimate": gpu_seconds_estimate,
            "unit_price": unit_price,
            "minimum_charge": minimum_charge,
            "amount": amount,
            "amount_minor": amount_minor,
            "hold_amount": hold_amount,
            "currency": currency,
            "queue": queue,
            "available": available,
            "sufficient": sufficient,
            "target": target,
            "links": links,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.quote_links import QuoteLinks # noqa: PLC0415
        from ..models.quote_target import QuoteTarget # noqa: PLC0415
        d = dict(src_dict)
        frames = d.pop("frames")

        kind = d.pop("kind")

        processed_width = d.pop("processed_width")

        processed_height = d.pop("processed_height")

        mode = ModeEnum(d.pop("mode"))




        mode_requested = ModeEnum(d.pop("mode_requested"))




        resolution = ResolutionEnum(d.pop("resolution"))




        resolution_coefficient = d.pop("resolution_coefficient")

        mode_weight = d.pop("mode_weight")

        gpu_seconds_per_frame_estimate = d.pop("gpu_seconds_per_frame_estimate")

        gpu_seconds_estimate = d.pop("gpu_seconds_estimate")

        unit_price = d.pop("unit_price")

        minimum_charge = d.pop("minimum_charge")

        amount = d.pop("amount")

        amount_minor = d.pop("amount_minor")

        hold_amount = d.pop("hold_amount")

        currency = d.pop("currency")

        queue = d.pop("queue")

        available = d.pop("available")

        sufficient = d.pop("sufficient")

        target = QuoteTarget.from_dict(d.pop("target"))




        links = QuoteLinks.from_dict(d.pop("links"))




        quote = cls(
            frames=frames,
            kind=kind,
            processed_width=processed_width,
            processed_height=processed_height,
            mode=mode,
            mode_requested=mode_requested,
            resolution=resolution,
            resolution_coefficient=resolution_coefficient,
            mode_weight=mode_weight,
            gpu_seconds_per_frame_estimate=gpu_seconds_per_frame_estimate,
            gpu_seconds_estimate=gpu_seconds_estimate,
            unit_price=unit_price,
            minimum_charge=minimum_charge,
            amount=amount,
            amount_minor=amount_minor,
            hold_amount=hold_amount,
            currency=currency,
            queue=queue,
            available=available,
            sufficient=sufficient,
            target=target,
            links=links,
        )

        return quote

