from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.client_enum import ClientEnum
from typing import cast
import datetime






T = TypeVar("T", bound="SignedInDeviceListItem")



@_attrs_define
class SignedInDeviceListItem:
    """ 
        Attributes:
            id (int):
            name (str):
            client (ClientEnum): * `mobile` - mobile
                * `web` - web
            created_at (datetime.datetime):
            last_used_at (datetime.datetime | None):
            current (bool): The device this request comes from
     """

    id: int
    name: str
    client: ClientEnum
    created_at: datetime.datetime
    last_used_at: datetime.datetime | None
    current: bool





    def to_dict(self) -> dict[str, Any]:
        id = self.id

        name = self.name

        client = self.client.value

        created_at = self.created_at.isoformat()

        last_used_at: None | str
        if isinstance(self.last_used_at, datetime.datetime):
            last_used_at = self.last_used_at.isoformat()
        else:
            last_used_at = self.last_used_at

        current = self.current


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "id": id,
            "name": name,
            "client": client,
            "created_at": created_at,
            "last_used_at": last_used_at,
            "current": current,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        name = d.pop("name")

        client = ClientEnum(d.pop("client"))




        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        def _parse_last_used_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_used_at_type_0 = datetime.datetime.fromisoformat(data)



                return last_used_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        last_used_at = _parse_last_used_at(d.pop("last_used_at"))


        current = d.pop("current")

        signed_in_device_list_item = cls(
            id=id,
            name=name,
            client=client,
            created_at=created_at,
            last_used_at=last_used_at,
            current=current,
        )

        return signed_in_device_list_item

