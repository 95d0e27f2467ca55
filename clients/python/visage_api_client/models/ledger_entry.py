from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.ledger_entry_kind_enum import LedgerEntryKindEnum
from typing import cast
from uuid import UUID
import datetime






T = TypeVar("T", bound="LedgerEntry")



@_attrs_define
class LedgerEntry:
    """ 
        Attributes:
            id (int):
            kind (LedgerEntryKindEnum): * `top_up` - Top-up
                * `hold` - Hold
                * `capture` - Capture
                * `release` - Release
                * `refund` - Refund
                * `adjustment` - Adjustment
                * `purchase` - Purchase
                * `reversal` - Purchase reversed
            amount (str): Positive, except adjustments (signed).
            job_id (None | UUID):
            reason (str):
            created_at (datetime.datetime):
     """

    id: int
    kind: LedgerEntryKindEnum
    amount: str
    job_id: None | UUID
    reason: str
    created_at: datetime.datetime





    def to_dict(self) -> dict[str, Any]:
        id = self.id

        kind = self.kind.value

        amount = self.amount

        job_id: None | str
        if isinstance(self.job_id, UUID):
            job_id = str(self.job_id)
        else:
            job_id = self.job_id

        reason = self.reason

        created_at = self.created_at.isoformat()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "id": id,
            "kind": kind,
            "amount": amount,
            "job_id": job_id,
            "reason": reason,
            "created_at": created_at,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        kind = LedgerEntryKindEnum(d.pop("kind"))




        amount = d.pop("amount")

        def _parse_job_id(data: object) -> None | UUID:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                job_id_type_0 = UUID(data)



                return job_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | UUID, data)

        job_id = _parse_job_id(d.pop("job_id"))


        reason = d.pop("reason")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        ledger_entry = cls(
            id=id,
            kind=kind,
            amount=amount,
            job_id=job_id,
            reason=reason,
            created_at=created_at,
        )

        return ledger_entry

