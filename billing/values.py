"""Plain values that cross the billing boundary (the platform builds Usage, gets Quote and Balance)."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any


@dataclass(frozen=True)
class Quote:
    """The price of a job before it runs: `amount` is the most the job will cost, and exactly what
    hold_place reserves (`hold_amount` == `amount`; kept for API clients that read it)."""

    frames: int
    processed_width: int
    processed_height: int
    resolution_coefficient: Decimal
    mode_weight: Decimal
    gpu_seconds_estimate: Decimal  # for the whole job (frames × gpu_seconds_per_frame_estimate)
    unit_price: Decimal
    amount: Decimal
    hold_amount: Decimal
    currency: str
    queue: str
    mode: str = ""
    resolution: str = ""
    gpu_seconds_per_frame_estimate: Decimal = Decimal(0)
    minimum_charge: Decimal = Decimal(0)
    plan: str = ""
    mode_requested: str = ""  # what the user chose; `mode` is what runs (and is priced) on this install
    kind: str = "image"
    pixel_class: str = ""
    minor_unit_exponent: int = 2
    scaled: bool = True  # the preset scaled the target down (else it is priced as at most "original")

    @property
    def amount_minor(self) -> int:
        """The amount in the currency's minor unit (cents for USD)."""
        return int(self.amount.scaleb(self.minor_unit_exponent).to_integral_value())

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly: Decimals as strings, so no precision is lost."""
        return {
            "frames": self.frames,
            "processed_width": self.processed_width,
            "processed_height": self.processed_height,
            "mode": self.mode,
            "resolution": self.resolution,
            "resolution_coefficient": str(self.resolution_coefficient),
            "mode_weight": str(self.mode_weight),
            "gpu_seconds_per_frame_estimate": str(self.gpu_seconds_per_frame_estimate),
            "gpu_seconds_estimate": str(self.gpu_seconds_estimate),
            "unit_price": str(self.unit_price),
            "minimum_charge": str(self.minimum_charge),
            "amount": str(self.amount),
            "hold_amount": str(self.hold_amount),
            "currency": self.currency,
            "queue": self.queue,
            "plan": self.plan,
            "mode_requested": self.mode_requested or self.mode,
            "kind": self.kind,
            "pixel_class": self.pixel_class,
            "minor_unit_exponent": self.minor_unit_exponent,
            "amount_minor": self.amount_minor,
            "scaled": self.scaled,
        }


@dataclass(frozen=True)
class Usage:
    """What a finished job actually used, measured by the GPU worker."""

    frames: int
    width: int  # processed
    height: int  # processed
    mode: str  # the mode that ran (priced); may be cheaper than the one requested
    resolution: str
    gpu_seconds: Decimal  # whole job
    wall_seconds: Decimal
    stage_seconds: dict[str, float] = field(default_factory=dict)
    kind: str = ""  # "image" or "video"; empty: a video when frames > 1
    mode_requested: str = ""


@dataclass(frozen=True)
class Balance:
    balance: Decimal
    held: Decimal
    available: Decimal
    currency: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "balance": str(self.balance),
            "held": str(self.held),
            "available": str(self.available),
            "currency": self.currency,
        }
