from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.ledger_entry import LedgerEntry





T = TypeVar("T", bound="PaginatedLedgerEntryList")



@_attrs_define
class PaginatedLedgerEntryList:
    """ 
        Attributes:
            count (int):  Example: 123.
            results (list[LedgerEntry]):
            next_ (None | str | Unset):  Example: http://api.example.org/accounts/?page=4.
            previous (None | str | Unset):  Example: http://api.example.org/accounts/?page=2.
     """

    count: int
    results: list[LedgerEntry]
    next_: None | str | Unset = UNSET
    previous: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.ledger_entry import LedgerEntry # noqa: PLC0415
        count = self.count

        results = []
        for results_item_data in self.results:
            results_item = results_item_data.to_dict()
            results.append(results_item)



        next_: None | str | Unset
        if isinstance(self.next_, Unset):
            next_ = UNSET
        else:
            next_ = self.next_

        previous: None | str | Unset
        if isinstance(self.previous, Unset):
            previous = UNSET
        else:
            previous = self.previous


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "count": count,
            "results": results,
        })
        if next_ is not UNSET:
            field_dict["next"] = next_
        if previous is not UNSET:
            field_dict["previous"] = previous

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.ledger_entry import LedgerEntry # noqa: PLC0415
        d = dict(src_dict)
        count = d.pop("count")

        results = []
        _results = d.pop("results")
        for results_item_data in (_results):
            results_item = LedgerEntry.from_dict(results_item_data)



            results.append(results_item)


        def _parse_next_(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        next_ = _parse_next_(d.pop("next", UNSET))


        def _parse_previous(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        previous = _parse_previous(d.pop("previous", UNSET))


        paginated_ledger_entry_list = cls(
            count=count,
            results=results,
            next_=next_,
            previous=previous,
        )

        return paginated_ledger_entry_list

