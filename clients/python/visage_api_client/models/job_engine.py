from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.face_analysis_enum import FaceAnalysisEnum
from ..models.mode_enum import ModeEnum
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.job_engine_model_versions import JobEngineModelVersions





T = TypeVar("T", bound="JobEngine")



@_attrs_define
class JobEngine:
    """ What ran (diagnostics). Photo and video jobs fill different members; more may be added.

        Attributes:
            swapper (str | Unset):
            enhancer (None | str | Unset):
            enhancer_skipped (str | Unset):
            faces_swapped (int | Unset):
            source_photos (int | Unset):
            model_versions (JobEngineModelVersions | Unset):
            mode_requested (ModeEnum | Unset): * `fast` - Fast
                * `standard` - Standard
                * `hq` - High quality
            mode_ran (ModeEnum | Unset): * `fast` - Fast
                * `standard` - Standard
                * `hq` - High quality
            mode_steps (list[str] | Unset):
            mode_note (str | Unset):
            visible_mark (bool | Unset):
            face_boxes (list[list[int]] | Unset):
            face_analysis (FaceAnalysisEnum | Unset): * `cached` - cached
                * `computed` - computed
                * `partly cached` - partly cached
            frames_swapped (int | Unset):
            segments (int | Unset):
            detections (int | Unset):
            tracking (bool | Unset):
            audio (bool | Unset):
            fps (float | Unset):
     """

    swapper: str | Unset = UNSET
    enhancer: None | str | Unset = UNSET
    enhancer_skipped: str | Unset = UNSET
    faces_swapped: int | Unset = UNSET
    source_photos: int | Unset = UNSET
    model_versions: JobEngineModelVersions | Unset = UNSET
    mode_requested: ModeEnum | Unset = UNSET
    mode_ran: ModeEnum | Unset = UNSET
    mode_steps: list[str] | Unset = UNSET
    mode_note: str | Unset = UNSET
    visible_mark: bool | Unset = UNSET
    face_boxes: list[list[int]] | Unset = UNSET
    face_analysis: FaceAnalysisEnum | Unset = UNSET
    frames_swapped: int | Unset = UNSET
    segments: int | Unset = UNSET
    detections: int | Unset = UNSET
    tracking: bool | Unset = UNSET
    audio: bool | Unset = UNSET
    fps: float | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.job_engine_model_versions import JobEngineModelVersions # noqa: PLC0415
        swapper = self.swapper

        enhancer: None | str | Unset
        if isinstance(self.enhancer, Unset):
            enhancer = UNSET
        else:
            enhancer = self.enhancer

        enhancer_skipped = self.enhancer_skipped

        faces_swapped = self.faces_swapped

        source_photos = self.source_photos

        model_versions: dict[str, Any] | Unset = UNSET
        if not isinstance(self.model_versions, Unset):
            model_versions = self.model_versions.to_dict()

        mode_requested: str | Unset = UNSET
        if not isinstance(self.mode_requested, Unset):
            mode_requested = self.mode_requested.value


        mode_ran: str | Unset = UNSET
        if not isinstance(self.mode_ran, Unset):
            mode_ran = self.mode_ran.value


        mode_steps: list[str] | Unset = UNSET
        if not isinstance(self.mode_steps, Unset):
            mode_steps = self.mode_steps



        mode_note = self.mode_note

        visible_mark = self.visible_mark

        face_boxes: list[list[int]] | Unset = UNSET
        if not isinstance(self.face_boxes, Unset):
            face_boxes = []
            for face_boxes_item_data in self.face_boxes:
                face_boxes_item = face_boxes_item_data


                face_boxes.append(face_boxes_item)



        face_analysis: str | Unset = UNSET
        if not isinstance(self.face_analysis, Unset):
            face_analysis = self.face_analysis.value


        frames_swapped = self.frames_swapped

        segments = self.segments

        detections = self.detections

        tracking = self.tracking

        audio = self.audio

        fps = self.fps


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
        })
        if swapper is not UNSET:
            field_dict["swapper"] = swapper
        if enhancer is not UNSET:
            field_dict["enhancer"] = enhancer
        if enhancer_skipped is not UNSET:
            field_dict["enhancer_skipped"] = enhancer_skipped
        if faces_swapped is not UNSET:
            field_dict["faces_swapped"] = faces_swapped
        if source_photos is not UNSET:
            field_dict["source_photos"] = source_photos
        if model_versions is not UNSET:
            field_dict["model_versions"] = model_versions
        if mode_requested is not UNSET:
            field_dict["mode_requested"] = mode_requested
        if mode_ran is not UNSET:
            field_dict["mode_ran"] = mode_ran
        if mode_steps is not UNSET:
            field_dict["mode_steps"] = mode_steps
        if mode_note is not UNSET:
            field_dict["mode_note"] = mode_note
        if visible_mark is not UNSET:
            field_dict["visible_mark"] = visible_mark
        if face_boxes is not UNSET:
            field_dict["face_boxes"] = face_boxes
        if face_analysis is not UNSET:
            field_dict["face_analysis"] = face_analysis
        if frames_swapped is not UNSET:
            field_dict["frames_swapped"] = frames_swapped
        if segments is not UNSET:
            field_dict["segments"] = segments
        if detections is not UNSET:
            field_dict["detections"] = detections
        if tracking is not UNSET:
            field_dict["tracking"] = tracking
        if audio is not UNSET:
            field_dict["audio"] = audio
        if fps is not UNSET:
            field_dict["fps"] = fps

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.job_engine_model_versions import JobEngineModelVersions # noqa: PLC0415
        d = dict(src_dict)
        swapper = d.pop("swapper", UNSET)

        def _parse_enhancer(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        enhancer = _parse_enhancer(d.pop("enhancer", UNSET))


        enhancer_skipped = d.pop("enhancer_skipped", UNSET)

        faces_swapped = d.pop("faces_swapped", UNSET)

        source_photos = d.pop("source_photos", UNSET)

        _model_versions = d.pop("model_versions", UNSET)
        model_versions: JobEngineModelVersions | Unset
        if isinstance(_model_versions,  Unset):
            model_versions = UNSET
        else:
            model_versions = JobEngineModelVersions.from_dict(_model_versions)




        _mode_requested = d.pop("mode_requested", UNSET)
        mode_requested: ModeEnum | Unset
        if isinstance(_mode_requested,  Unset):
            mode_requested = UNSET
        else:
            mode_requested = ModeEnum(_mode_requested)




        _mode_ran = d.pop("mode_ran", UNSET)
        mode_ran: ModeEnum | Unset
        if isinstance(_mode_ran,  Unset):
            mode_ran = UNSET
        else:
            mode_ran = ModeEnum(_mode_ran)




        mode_steps = cast(list[str], d.pop("mode_steps", UNSET))


        mode_note = d.pop("mode_note", UNSET)

        visible_mark = d.pop("visible_mark", UNSET)

        _face_boxes = d.pop("face_boxes", UNSET)
        face_boxes: list[list[int]] | Unset = UNSET
        if _face_boxes is not UNSET:
            face_boxes = []
            for face_boxes_item_data in _face_boxes:
                face_boxes_item = cast(list[int], face_boxes_item_data)

                face_boxes.append(face_boxes_item)


        _face_analysis = d.pop("face_analysis", UNSET)
        face_analysis: FaceAnalysisEnum | Unset
        if isinstance(_face_analysis,  Unset):
            face_analysis = UNSET
        else:
            face_analysis = FaceAnalysisEnum(_face_analysis)




        frames_swapped = d.pop("frames_swapped", UNSET)

        segments = d.pop("segments", UNSET)

        detections = d.pop("detections", UNSET)

        tracking = d.pop("tracking", UNSET)

        audio = d.pop("audio", UNSET)

        fps = d.pop("fps", UNSET)

        job_engine = cls(
            swapper=swapper,
            enhancer=enhancer,
            enhancer_skipped=enhancer_skipped,
            faces_swapped=faces_swapped,
            source_photos=source_photos,
            model_versions=model_versions,
            mode_requested=mode_requested,
            mode_ran=mode_ran,
            mode_steps=mode_steps,
            mode_note=mode_note,
            visible_mark=visible_mark,
            face_boxes=face_boxes,
            face_analysis=face_analysis,
            frames_swapped=frames_swapped,
            segments=segments,
            detections=detections,
            tracking=tracking,
            audio=audio,
            fps=fps,
        )


        job_engine.additional_properties = d
        return job_engine

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
