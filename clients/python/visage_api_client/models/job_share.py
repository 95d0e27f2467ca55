from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime






T = TypeVar("T", bound="JobShare")



@_attrs_define
class JobShare:
    """ 
        Attributes:
            url (None | str): null only after the server's secret key changed.
            expires_at (datetime.datetime):
            created_at (datetime.datetime):
            views (int):
     """

    url: None | str
    expires_at: datetime.datetime
    created_at: datetime.datetime
    views: int





    def to_dict(self) -> dict[str, Any]:
        url: None | str
        url = self.url

        expires_at = self.expires_at.isoformat()

        created_at = self.created_at.isoformat()

        views = self.views


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "url": url,
            "expires_at": expires_at,
            "created_at": created_at,
            "views": views,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        def _parse_url(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        url = _parse_url(d.pop("url"))


        expires_at = datetime.datetime.fromisoformat(d.pop("expires_at"))




        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        views = d.pop("views")

        job_share = cls(
            url=url,
            expires_at=expires_at,
            created_at=created_at,
            views=views,
        )

        return job_share

