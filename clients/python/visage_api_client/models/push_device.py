from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.push_platform_enum import PushPlatformEnum
from typing import cast
import datetime






T = TypeVar("T", bound="PushDevice")



@_attrs_define
class PushDevice:
    """ 
        Attributes:
            id (int):
            platform (PushPlatformEnum): * `fcm` - Firebase Cloud Messaging
                * `apns` - Apple Push Notification service
            app_id (str):
            name (str):
            locale (str):
            push_enabled (bool): Whether this server is configured to push to the device's platform now
            created_at (datetime.datetime):
            updated_at (datetime.datetime): Its latest registration
     """

    id: int
    platform: PushPlatformEnum
    app_id: str
    name: str
    locale: str
    push_enabled: bool
    created_at: datetime.datetime
    updated_at: datetime.datetime





    def to_dict(self) -> dict[str, Any]:
        id = self.id

        platform = self.platform.value

        app_id = self.app_id

        name = self.name

        locale = self.locale

        push_enabled = self.push_enabled

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "id": id,
            "platform": platform,
            "app_id": app_id,
            "name": name,
            "locale": locale,
            "push_enabled": push_enabled,
            "created_at": created_at,
            "updated_at": updated_at,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        platform = PushPlatformEnum(d.pop("platform"))




        app_id = d.pop("app_id")

        name = d.pop("name")

        locale = d.pop("locale")

        push_enabled = d.pop("push_enabled")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))




        push_device = cls(
            id=id,
            platform=platform,
            app_id=app_id,
            name=name,
            locale=locale,
            push_enabled=push_enabled,
            created_at=created_at,
            updated_at=updated_at,
        )

        return push_device

