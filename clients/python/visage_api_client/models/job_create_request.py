from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field
import json
from .. import types

from ..types import UNSET, Unset

from ..models.faces_enum import FacesEnum
from ..models.mode_enum import ModeEnum
from ..models.resolution_enum import ResolutionEnum
from ..types import File, FileTypes
from ..types import UNSET, Unset
from io import BytesIO
from typing import cast
from uuid import UUID

if TYPE_CHECKING:
  from ..models.job_create_request_face_sources_item import JobCreateRequestFaceSourcesItem





T = TypeVar("T", bound="JobCreateRequest")



@_attrs_define
class JobCreateRequest:
    """ 
        Attributes:
            source (File): Photo of the face to use (JPEG, PNG, WebP). Repeat the field (up to VISAGE_MAX_SOURCE_PHOTOS)
                with more photos of the same person: the identity is averaged over all of them.
            target (File): Photo to put the face into
            source_upload (list[UUID] | Unset): Instead of source files: the ids of completed direct uploads (POST
                /api/v1/uploads) of the source photo(s), repeated in order.
            target_upload (UUID | Unset): Instead of a target file: the id of a completed direct upload (POST
                /api/v1/uploads), for large videos sent in resumable parts straight to storage.
            mode (ModeEnum | Unset): * `fast` - Fast
                * `standard` - Standard
                * `hq` - High quality Default: ModeEnum.STANDARD.
            resolution (ResolutionEnum | Unset): * `720p` - 720p
                * `1080p` - 1080p
                * `original` - Original
            faces (FacesEnum | Unset): * `one` - The largest face
                * `many` - Every face
                * `reference` - Faces like the reference face Default: FacesEnum.ONE.
            face_index (int | None | Unset):
            reference_face_index (int | None | Unset):
            webhook_url (str | Unset): Called with the signed job object when the job ends (succeeded, failed, rejected or
                canceled). http(s) only, no user name or password in it; private and loopback addresses are refused in
                production.
            face_sources (list[JobCreateRequestFaceSourcesItem] | Unset): Different people into different faces of a photo:
                a JSON list like [{"face": 0, "source": 1}, {"face": 1, "source": 0}] pairing target faces (largest first) with
                source photos (in upload order). The source photos are then different people, not averaged.
            consent (bool | Unset): Required, true: you confirm you have the right to use the face(s) in the photos you
                upload (the wording is VISAGE_CONSENT_TEXT; its version is stored with the job). Missing or false: 422
                consent_required, and nothing is stored.
     """

    source: File
    target: File
    source_upload: list[UUID] | Unset = UNSET
    target_upload: UUID | Unset = UNSET
    mode: ModeEnum | Unset = ModeEnum.STANDARD
    resolution: ResolutionEnum | Unset = UNSET
    faces: FacesEnum | Unset = FacesEnum.ONE
    face_index: int | None | Unset = UNSET
    reference_face_index: int | None | Unset = UNSET
    webhook_url: str | Unset = UNSET
    face_sources: list[JobCreateRequestFaceSourcesItem] | Unset = UNSET
    consent: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.job_create_request_face_sources_item import JobCreateRequestFaceSourcesItem # noqa: PLC0415
        source = self.source.to_tuple()


        target = self.target.to_tuple()


        source_upload: list[str] | Unset = UNSET
        if not isinstance(self.source_upload, Unset):
            source_upload = []
            for source_upload_item_data in self.source_upload:
                source_upload_item = str(source_upload_item_data)
                source_upload.append(source_upload_item)



        target_upload: str | Unset = UNSET
        if not isinstance(self.target_upload, Unset):
            target_upload = str(self.target_upload)

        mode: str | Unset = UNSET
        if not isinstance(self.mode, Unset):
            mode = self.mode.value


        resolution: str | Unset = UNSET
        if not isinstance(self.resolution, Unset):
            resolution = self.resolution.value


        faces: str | Unset = UNSET
        if not isinstance(self.faces, Unset):
            faces = self.faces.value


        face_index: int | None | Unset
        if isinstance(self.face_index, Unset):
            face_index = UNSET
        else:
            face_index = self.face_index

        reference_face_index: int | None | Unset
        if isinstance(self.reference_face_index, Unset):
            reference_face_index = UNSET
        else:
            reference_face_index = self.reference_face_index

        webhook_url: str | Unset
        if isinstance(self.webhook_url, Unset):
            webhook_url = UNSET
        else:
            webhook_url = self.webhook_url

        face_sources: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.face_sources, Unset):
            face_sources = []
            for face_sources_item_data in self.face_sources:
                face_sources_item = face_sources_item_data.to_dict()
                face_sources.append(face_sources_item)



        consent = self.consent


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "source": source,
            "target": target,
        })
        if source_upload is not UNSET:
            field_dict["source_upload"] = source_upload
        if target_upload is not UNSET:
            field_dict["target_upload"] = target_upload
        if mode is not UNSET:
            field_dict["mode"] = mode
        if resolution is not UNSET:
            field_dict["resolution"] = resolution
        if faces is not UNSET:
            field_dict["faces"] = faces
        if face_index is not UNSET:
            field_dict["face_index"] = face_index
        if reference_face_index is not UNSET:
            field_dict["reference_face_index"] = reference_face_index
        if webhook_url is not UNSET:
            field_dict["webhook_url"] = webhook_url
        if face_sources is not UNSET:
            field_dict["face_sources"] = face_sources
        if consent is not UNSET:
            field_dict["consent"] = consent

        return field_dict


    def to_multipart(self) -> types.RequestFiles:
        from ..models.job_create_request_face_sources_item import JobCreateRequestFaceSourcesItem # noqa: PLC0415
        files: types.RequestFiles = []

        files.append(("source", self.source.to_tuple()))



        files.append(("target", self.target.to_tuple()))



        if not isinstance(self.source_upload, Unset):
            for source_upload_item_element in self.source_upload:
                files.append(("source_upload", (None, str(source_upload_item_element), "text/plain")))




        if not isinstance(self.target_upload, Unset):
            files.append(("target_upload", (None, str(self.target_upload), "text/plain")))



        if not isinstance(self.mode, Unset):
            files.append(("mode",  (None, str(self.mode.value).encode(), "text/plain")))



        if not isinstance(self.resolution, Unset):
            files.append(("resolution",  (None, str(self.resolution.value).encode(), "text/plain")))



        if not isinstance(self.faces, Unset):
            files.append(("faces",  (None, str(self.faces.value).encode(), "text/plain")))



        if not isinstance(self.face_index, Unset):
            if isinstance(self.face_index, int):

                files.append(("face_index", (None, str(self.face_index).encode(), "text/plain")))
            else:
                files.append(("face_index", (None, str(self.face_index).encode(), "text/plain")))


        if not isinstance(self.reference_face_index, Unset):
            if isinstance(self.reference_face_index, int):

                files.append(("reference_face_index", (None, str(self.reference_face_index).encode(), "text/plain")))
            else:
                files.append(("reference_face_index", (None, str(self.reference_face_index).encode(), "text/plain")))


        if not isinstance(self.webhook_url, Unset):
            if isinstance(self.webhook_url, str):

                files.append(("webhook_url", (None, str(self.webhook_url).encode(), "text/plain")))


        if not isinstance(self.face_sources, Unset):
            for face_sources_item_element in self.face_sources:
                files.append(("face_sources", (None, json.dumps( face_sources_item_element.to_dict()).encode(), "application/json")))




        if not isinstance(self.consent, Unset):
            files.append(("consent", (None, str(self.consent).encode(), "text/plain")))




        for prop_name, prop in self.additional_properties.items():
            files.append((prop_name, (None, str(prop).encode(), "text/plain")))



        return files


    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.job_create_request_face_sources_item import JobCreateRequestFaceSourcesItem # noqa: PLC0415
        d = dict(src_dict)
        source = File(
             payload = BytesIO(d.pop("source"))
        )




        target = File(
             payload = BytesIO(d.pop("target"))
        )




        _source_upload = d.pop("source_upload", UNSET)
        source_upload: list[UUID] | Unset = UNSET
        if _source_upload is not UNSET:
            source_upload = []
            for source_upload_item_data in _source_upload:
                source_upload_item = UUID(source_upload_item_data)



                source_upload.append(source_upload_item)


        _target_upload = d.pop("target_upload", UNSET)
        target_upload: UUID | Unset
        if isinstance(_target_upload,  Unset):
            target_upload = UNSET
        else:
            target_upload = UUID(_target_upload)




        _mode = d.pop("mode", UNSET)
        mode: ModeEnum | Unset
        if isinstance(_mode,  Unset):
            mode = UNSET
        else:
            mode = ModeEnum(_mode)




        _resolution = d.pop("resolution", UNSET)
        resolution: ResolutionEnum | Unset
        if isinstance(_resolution,  Unset):
            resolution = UNSET
        else:
            resolution = ResolutionEnum(_resolution)




        _faces = d.pop("faces", UNSET)
        faces: FacesEnum | Unset
        if isinstance(_faces,  Unset):
            faces = UNSET
        else:
            faces = FacesEnum(_faces)




        def _parse_face_index(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        face_index = _parse_face_index(d.pop("face_index", UNSET))


        def _parse_reference_face_index(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        reference_face_index = _parse_reference_face_index(d.pop("reference_face_index", UNSET))


        def _parse_webhook_url(data: object) -> str | Unset:
            if isinstance(data, Unset):
                return data
            return cast(str | Unset, data)

        webhook_url = _parse_webhook_url(d.pop("webhook_url", UNSET))


        _face_sources = d.pop("face_sources", UNSET)
        face_sources: list[JobCreateRequestFaceSourcesItem] | Unset = UNSET
        if _face_sources is not UNSET:
            face_sources = []
            for face_sources_item_data in _face_sources:
                face_sources_item = JobCreateRequestFaceSourcesItem.from_dict(face_sources_item_data)



                face_sources.append(face_sources_item)


        consent = d.pop("consent", UNSET)

        job_create_request = cls(
            source=source,
            target=target,
            source_upload=source_upload,
            target_upload=target_upload,
            mode=mode,
            resolution=resolution,
            faces=faces,
            face_index=face_index,
            reference_face_index=reference_face_index,
            webhook_url=webhook_url,
            face_sources=face_sources,
            consent=consent,
        )


        job_create_request.additional_properties = d
        return job_create_request

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
