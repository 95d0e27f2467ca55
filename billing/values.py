"""Plain values that cross the billing boundary (the platform builds Usage, gets Quote and Balance)."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any


@dataclass(frozen=True)
class Quote:
    """The price of a job before it runs. `hold_amount` is what hold_place reserves."""

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
        }


@dataclass(frozen=True)
class Usage:
    """What a finished job actually used, measured by the GPU worker."""

    frames: int
    width: int  # processed
    height: int  # processed
    mode: str
    resolution: str
    gpu_seconds: Decimal  # whole job
    wall_seconds: Decimal
    stage_seconds: dict[str, float] = field(default_factory=dict)


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
