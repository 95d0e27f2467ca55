from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="JobUrls")



@_attrs_define
class JobUrls:
    """ 
        Attributes:
            self_ (str):
            cancel (str):
            share (str):
            page (str): The job's page on the site.
     """

    self_: str
    cancel: str
    share: str
    page: str





    def to_dict(self) -> dict[str, Any]:
        self_ = self.self_

        cancel = self.cancel

        share = self.share

        page = self.page


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "self": self_,
            "cancel": cancel,
            "share": share,
            "page": page,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        self_ = d.pop("self")

        cancel = d.pop("cancel")

        share = d.pop("share")

        page = d.pop("page")

        job_urls = cls(
            self_=self_,
            cancel=cancel,
            share=share,
            page=page,
        )

        return job_urls

