from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="JobResult")



@_attrs_define
class JobResult:
    """ A succeeded job's result. Once its media were purged only `url`, `expires_at`, `media_type` and
    `deleted` (true) are sent, the URLs null.

        Attributes:
            url (None | str): Presigned download (Content-Disposition: attachment).
            expires_at (datetime.datetime | None): When the presigned URLs stop working.
            media_type (str):
            deleted (bool):
            inline_url (str | Unset): Presigned, to show in place.
            before_url (str | Unset): The target as it was, at the result's size.
            thumbnail_url (str | Unset): A small WebP (404 for results older than thumbnails).
            bytes_ (int | None | Unset):
            width (int | None | Unset):
            height (int | None | Unset):
            ai_generated (bool | Unset):
     """

    url: None | str
    expires_at: datetime.datetime | None
    media_type: str
    deleted: bool
    inline_url: str | Unset = UNSET
    before_url: str | Unset = UNSET
    thumbnail_url: str | Unset = UNSET
    bytes_: int | None | Unset = UNSET
    width: int | None | Unset = UNSET
    height: int | None | Unset = UNSET
    ai_generated: bool | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        url: None | str
        url = self.url

        expires_at: None | str
        if isinstance(self.expires_at, datetime.datetime):
            expires_at = self.expires_at.isoformat()
        else:
            expires_at = self.expires_at

        media_type = self.media_type

        deleted = self.deleted

        inline_url = self.inline_url

        before_url = self.before_url

        thumbnail_url = self.thumbnail_url

        bytes_: int | None | Unset
        if isinstance(self.bytes_, Unset):
            bytes_ = UNSET
        else:
            bytes_ = self.bytes_

        width: int | None | Unset
        if isinstance(self.width, Unset):
            width = UNSET
        else:
            width = self.width

        height: int | None | Unset
        if isinstance(self.height, Unset):
            height = UNSET
        else:
            height = self.height

        ai_generated = self.ai_generated


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "url": url,
            "expires_at": expires_at,
            "media_type": media_type,
            "deleted": deleted,
        })
        if inline_url is not UNSET:
            field_dict["inline_url"] = inline_url
        if before_url is not UNSET:
            field_dict["before_url"] = before_url
        if thumbnail_url is not UNSET:
            field_dict["thumbnail_url"] = thumbnail_url
        if bytes_ is not UNSET:
            field_dict["bytes"] = bytes_
        if width is not UNSET:
            field_dict["width"] = width
        if height is not UNSET:
            field_dict["height"] = height
        if ai_generated is not UNSET:
            field_dict["ai_generated"] = ai_generated

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        def _parse_url(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        url = _parse_url(d.pop("url"))


        def _parse_expires_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                expires_at_type_0 = datetime.datetime.fromisoformat(data)



                return expires_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        expires_at = _parse_expires_at(d.pop("expires_at"))


        media_type = d.pop("media_type")

        deleted = d.pop("deleted")

        inline_url = d.pop("inline_url", UNSET)

        before_url = d.pop("before_url", UNSET)

        thumbnail_url = d.pop("thumbnail_url", UNSET)

        def _parse_bytes_(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        bytes_ = _parse_bytes_(d.pop("bytes", UNSET))


        def _parse_width(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        width = _parse_width(d.pop("width", UNSET))


        def _parse_height(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        height = _parse_height(d.pop("height", UNSET))


        ai_generated = d.pop("ai_generated", UNSET)

        job_result = cls(
            url=url,
            expires_at=expires_at,
            media_type=media_type,
            deleted=deleted,
            inline_url=inline_url,
            before_url=before_url,
            thumbnail_url=thumbnail_url,
            bytes_=bytes_,
            width=width,
            height=height,
            ai_generated=ai_generated,
        )

        return job_result

