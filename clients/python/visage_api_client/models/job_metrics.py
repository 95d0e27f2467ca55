from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.job_metrics_stage_ms_type_0 import JobMetricsStageMsType0





T = TypeVar("T", bound="JobMetrics")



@_attrs_define
class JobMetrics:
    """ 
        Attributes:
            queue_seconds (float | None):
            gpu_seconds (float | None):
            wall_seconds (float | None):
            stage_ms (JobMetricsStageMsType0 | None): Milliseconds per engine stage.
            attempts (int):
     """

    queue_seconds: float | None
    gpu_seconds: float | None
    wall_seconds: float | None
    stage_ms: JobMetricsStageMsType0 | None
    attempts: int





    def to_dict(self) -> dict[str, Any]:
        from ..models.job_metrics_stage_ms_type_0 import JobMetricsStageMsType0 # noqa: PLC0415
        queue_seconds: float | None
        queue_seconds = self.queue_seconds

        gpu_seconds: float | None
        gpu_seconds = self.gpu_seconds

        wall_seconds: float | None
        wall_seconds = self.wall_seconds

        stage_ms: dict[str, Any] | None
        if isinstance(self.stage_ms, JobMetricsStageMsType0):
            stage_ms = self.stage_ms.to_dict()
        else:
            stage_ms = self.stage_ms

        attempts = self.attempts


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "queue_seconds": queue_seconds,
            "gpu_seconds": gpu_seconds,
            "wall_seconds": wall_seconds,
            "stage_ms": stage_ms,
            "attempts": attempts,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.job_metrics_stage_ms_type_0 import JobMetricsStageMsType0 # noqa: PLC0415
        d = dict(src_dict)
        def _parse_queue_seconds(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        queue_seconds = _parse_queue_seconds(d.pop("queue_seconds"))


        def _parse_gpu_seconds(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        gpu_seconds = _parse_gpu_seconds(d.pop("gpu_seconds"))


        def _parse_wall_seconds(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        wall_seconds = _parse_wall_seconds(d.pop("wall_seconds"))


        def _parse_stage_ms(data: object) -> JobMetricsStageMsType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                stage_ms_type_0 = JobMetricsStageMsType0.from_dict(data)



                return stage_ms_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobMetricsStageMsType0 | None, data)

        stage_ms = _parse_stage_ms(d.pop("stage_ms"))


        attempts = d.pop("attempts")

        job_metrics = cls(
            queue_seconds=queue_seconds,
            gpu_seconds=gpu_seconds,
            wall_seconds=wall_seconds,
            stage_ms=stage_ms,
            attempts=attempts,
        )

        return job_metrics

