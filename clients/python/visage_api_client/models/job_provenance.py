from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="JobProvenance")



@_attrs_define
class JobProvenance:
    """ The result's C2PA Content Credentials as read back after signing (`disabled`: not signed).

        Attributes:
            manifest_present (bool):
            disabled (bool | Unset):
            validation_state (str | Unset): Trusted, Valid or Invalid.
            signer (str | Unset):
            issuer (str | Unset):
            alg (str | Unset):
            failures (list[str] | Unset):
            content_id (str | Unset):
     """

    manifest_present: bool
    disabled: bool | Unset = UNSET
    validation_state: str | Unset = UNSET
    signer: str | Unset = UNSET
    issuer: str | Unset = UNSET
    alg: str | Unset = UNSET
    failures: list[str] | Unset = UNSET
    content_id: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        manifest_present = self.manifest_present

        disabled = self.disabled

        validation_state = self.validation_state

        signer = self.signer

        issuer = self.issuer

        alg = self.alg

        failures: list[str] | Unset = UNSET
        if not isinstance(self.failures, Unset):
            failures = self.failures



        content_id = self.content_id


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "manifest_present": manifest_present,
        })
        if disabled is not UNSET:
            field_dict["disabled"] = disabled
        if validation_state is not UNSET:
            field_dict["validation_state"] = validation_state
        if signer is not UNSET:
            field_dict["signer"] = signer
        if issuer is not UNSET:
            field_dict["issuer"] = issuer
        if alg is not UNSET:
            field_dict["alg"] = alg
        if failures is not UNSET:
            field_dict["failures"] = failures
        if content_id is not UNSET:
            field_dict["content_id"] = content_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        manifest_present = d.pop("manifest_present")

        disabled = d.pop("disabled", UNSET)

        validation_state = d.pop("validation_state", UNSET)

        signer = d.pop("signer", UNSET)

        issuer = d.pop("issuer", UNSET)

        alg = d.pop("alg", UNSET)

        failures = cast(list[str], d.pop("failures", UNSET))


        content_id = d.pop("content_id", UNSET)

        job_provenance = cls(
            manifest_present=manifest_present,
            disabled=disabled,
            validation_state=validation_state,
            signer=signer,
            issuer=issuer,
            alg=alg,
            failures=failures,
            content_id=content_id,
        )

        return job_provenance

