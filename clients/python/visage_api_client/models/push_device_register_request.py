from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field
import json
from .. import types

from ..types import UNSET, Unset

from ..models.push_platform_enum import PushPlatformEnum
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="PushDeviceRegisterRequest")



@_attrs_define
class PushDeviceRegisterRequest:
    """ 
        Attributes:
            platform (PushPlatformEnum): * `fcm` - Firebase Cloud Messaging
                * `apns` - Apple Push Notification service
            token (str): The push token the platform gave the app (APNs: the device token in hex)
            app_id (str): The iOS bundle id (APNs topic) or the Android package name
            name (str | Unset): As the app names the device ("Ana's iPhone") Default: ''.
            locale (str | Unset): BCP 47 language of the device's pushes (e.g. de, pt-BR); empty: the site's
     """

    platform: PushPlatformEnum
    token: str
    app_id: str
    name: str | Unset = ''
    locale: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        platform = self.platform.value

        token = self.token

        app_id = self.app_id

        name = self.name

        locale: str | Unset
        if isinstance(self.locale, Unset):
            locale = UNSET
        else:
            locale = self.locale


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "platform": platform,
            "token": token,
            "app_id": app_id,
        })
        if name is not UNSET:
            field_dict["name"] = name
        if locale is not UNSET:
            field_dict["locale"] = locale

        return field_dict


    def to_multipart(self) -> types.RequestFiles:
        files: types.RequestFiles = []

        files.append(("platform",  (None, str(self.platform.value).encode(), "text/plain")))



        files.append(("token", (None, str(self.token).encode(), "text/plain")))



        files.append(("app_id", (None, str(self.app_id).encode(), "text/plain")))



        if not isinstance(self.name, Unset):
            files.append(("name", (None, str(self.name).encode(), "text/plain")))



        if not isinstance(self.locale, Unset):
            if isinstance(self.locale, str):

                files.append(("locale", (None, str(self.locale).encode(), "text/plain")))



        for prop_name, prop in self.additional_properties.items():
            files.append((prop_name, (None, str(prop).encode(), "text/plain")))



        return files


    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        platform = PushPlatformEnum(d.pop("platform"))




        token = d.pop("token")

        app_id = d.pop("app_id")

        name = d.pop("name", UNSET)

        def _parse_locale(data: object) -> str | Unset:
            if isinstance(data, Unset):
                return data
            return cast(str | Unset, data)

        locale = _parse_locale(d.pop("locale", UNSET))


        push_device_register_request = cls(
            platform=platform,
            token=token,
            app_id=app_id,
            name=name,
            locale=locale,
        )


        push_device_register_request.additional_properties = d
        return push_device_register_request

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
