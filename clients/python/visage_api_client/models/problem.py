from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.problem_code import ProblemCode
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.problem_errors import ProblemErrors
  from ..models.problem_links import ProblemLinks





T = TypeVar("T", bound="Problem")



@_attrs_define
class Problem:
    """ RFC 9457 problem details, with a stable machine `code`.

        Attributes:
            type_ (str): URI of the human page for `code`
            title (str):
            status (int):
            detail (str):
            code (ProblemCode): stable machine code
            instance (None | str): the request's path
            request_id (None | str): quote it to support (X-Request-ID)
            errors (ProblemErrors | Unset): per-field messages
            required (str | Unset): insufficient_credits: the price (decimal string)
            available (str | Unset): insufficient_credits: the available credit
            currency (str | Unset):
            required_minor (int | Unset):
            links (ProblemLinks | Unset):
     """

    type_: str
    title: str
    status: int
    detail: str
    code: ProblemCode
    instance: None | str
    request_id: None | str
    errors: ProblemErrors | Unset = UNSET
    required: str | Unset = UNSET
    available: str | Unset = UNSET
    currency: str | Unset = UNSET
    required_minor: int | Unset = UNSET
    links: ProblemLinks | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.problem_errors import ProblemErrors # noqa: PLC0415
        from ..models.problem_links import ProblemLinks # noqa: PLC0415
        type_ = self.type_

        title = self.title

        status = self.status

        detail = self.detail

        code = self.code.value

        instance: None | str
        instance = self.instance

        request_id: None | str
        request_id = self.request_id

        errors: dict[str, Any] | Unset = UNSET
        if not isinstance(self.errors, Unset):
            errors = self.errors.to_dict()

        required = self.required

        available = self.available

        currency = self.currency

        required_minor = self.required_minor

        links: dict[str, Any] | Unset = UNSET
        if not isinstance(self.links, Unset):
            links = self.links.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "type": type_,
            "title": title,
            "status": status,
            "detail": detail,
            "code": code,
            "instance": instance,
            "request_id": request_id,
        })
        if errors is not UNSET:
            field_dict["errors"] = errors
        if required is not UNSET:
            field_dict["required"] = required
        if available is not UNSET:
            field_dict["available"] = available
        if currency is not UNSET:
            field_dict["currency"] = currency
        if required_minor is not UNSET:
            field_dict["required_minor"] = required_minor
        if links is not UNSET:
            field_dict["links"] = links

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.problem_errors import ProblemErrors # noqa: PLC0415
        from ..models.problem_links import ProblemLinks # noqa: PLC0415
        d = dict(src_dict)
        type_ = d.pop("type")

        title = d.pop("title")

        status = d.pop("status")

        detail = d.pop("detail")

        code = ProblemCode(d.pop("code"))




        def _parse_instance(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        instance = _parse_instance(d.pop("instance"))


        def _parse_request_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        request_id = _parse_request_id(d.pop("request_id"))


        _errors = d.pop("errors", UNSET)
        errors: ProblemErrors | Unset
        if isinstance(_errors,  Unset):
            errors = UNSET
        else:
            errors = ProblemErrors.from_dict(_errors)




        required = d.pop("required", UNSET)

        available = d.pop("available", UNSET)

        currency = d.pop("currency", UNSET)

        required_minor = d.pop("required_minor", UNSET)

        _links = d.pop("links", UNSET)
        links: ProblemLinks | Unset
        if isinstance(_links,  Unset):
            links = UNSET
        else:
            links = ProblemLinks.from_dict(_links)




        problem = cls(
            type_=type_,
            title=title,
            status=status,
            detail=detail,
            code=code,
            instance=instance,
            request_id=request_id,
            errors=errors,
            required=required,
            available=available,
            currency=currency,
            required_minor=required_minor,
            links=links,
        )

        return problem

