from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.job_consent_channel_enum import JobConsentChannelEnum
from typing import cast
import datetime






T = TypeVar("T", bound="JobConsent")



@_attrs_define
class JobConsent:
    """ 
        Attributes:
            given_at (datetime.datetime):
            version (str):
            channel (JobConsentChannelEnum): * `api` - api
                * `site` - site
     """

    given_at: datetime.datetime
    version: str
    channel: JobConsentChannelEnum





    def to_dict(self) -> dict[str, Any]:
        given_at = self.given_at.isoformat()

        version = self.version

        channel = self.channel.value


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "given_at": given_at,
            "version": version,
            "channel": channel,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        given_at = datetime.datetime.fromisoformat(d.pop("given_at"))




        version = d.pop("version")

        channel = JobConsentChannelEnum(d.pop("channel"))




        job_consent = cls(
            given_at=given_at,
            version=version,
            channel=channel,
        )

        return job_consent

