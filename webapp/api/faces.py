"""POST /api/v1/faces — the faces in a photo, for the upload page's "pick the face to replace".

Boxes are in the decoded image's pixels (EXIF orientation applied, as the browser shows it), largest
first: the order the engine's `face_index` refers to (swap.selection.by_size).
"""

from __future__ import annotations

import io
import threading
from dataclasses import replace

import numpy as np
from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema
from PIL import Image, UnidentifiedImageError
from rest_framework import serializers
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from swap.config import PipelineConfig
from swap.errors import InvalidImage
from swap.image_io import decode_image
from swap.pipeline import build_detector, build_landmarker, detect_with_landmarks
from webapp.media.validation import UploadRejected, check_photo_type, read_upload

from .representations import FacesSerializer
from .throttles import FacesThrottle

# The detector works at most at VISAGE_DETECT_MAX_SIDE (1024 by default): decoding a 40-Mpx photo at
# full size only to shrink it costs seconds of web CPU, so decode at about twice that.
DECODE_MAX_SIDE = 2048

_detector = None
_landmarker = None
_detector_runtime: tuple[str, str] | None = None
_detector_lock = threading.Lock()
_detect_lock = threading.Lock()


def face_detector():
    """The engine's own detector (swap.pipeline.build_detector: VISAGE_DETECTOR, or "auto" = the installed
    ONNX detector, else dlib HOG with the engine's detection settings), built once per process, so the
    boxes are numbered as the engine's `face_index` numbers them. It runs where the workers' models
    run (VISAGE_INFERENCE, VISAGE_TRITON_URL). While the inference server is down, building or
    detecting raises InferenceUnavailable (a 503); nothing broken is kept, so the next request after
    it is back succeeds."""
    return _face_models()[0]


def _face_models():
    """(detector, landmarker) as the engine builds them: the landmarker drops what it finds no face
    in (Face Mesh), so the picker's numbers are the engine's."""
    global _detector, _landmarker, _detector_runtime
    runtime = (settings.VISAGE_INFERENCE, settings.VISAGE_TRITON_URL)
    with _detector_lock:
        if _detector is None or _detector_runtime != runtime:
            config = PipelineConfig.from_env()
            config.runtime = replace(config.runtime, inference=runtime[0], triton_url=runtime[1])
            detector, landmarker = build_detector(config), build_landmarker(config)
            _detector, _landmarker, _detector_runtime = detector, landmarker, runtime
        return _detector, _landmarker


def reset_face_detector() -> None:
    """Forget the detector (tests that change VISAGE_DETECTOR or the models directory)."""
    global _detector, _landmarker
    with _detector_lock:
        _detector = _landmarker = None


def displayed_size(data: bytes) -> tuple[int, int]:
    """(width, height) as displayed, EXIF orientation applied, from the header alone (0, 0 if unreadable)."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
            if image.getexif().get(0x0112, 1) in (5, 6, 7, 8):  # rotated by 90°
                width, height = height, width
            return width, height
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError):
        return 0, 0  # decode_image reports what is wrong


class FaceDetectView(APIView):
    parser_classes = [MultiPartParser, FormParser]
    throttle_classes = [FacesThrottle]

    class InputSerializer(serializers.Serializer):
        image = serializers.FileField(required=False, help_text="The photo to look for faces in (JPEG, PNG, WebP, HEIC or AVIF)")
        field = serializers.ChoiceField(
            choices=["source", "target"], required=False,
            help_text="Which upload the photo is for, so errors name it (default: image)",
        )

        class Meta:
            ref_name = "FaceDetect"

    @extend_schema(
        operation_id="faces_detect",
        request={"multipart/form-data": InputSerializer},
        responses={
            200: OpenApiResponse(FacesSerializer, description="The faces, largest first"),
            400: OpenApiResponse(description="problem+json"),
            503: OpenApiResponse(description="problem+json: the inference server is unavailable; retry shortly"),
        },
        summary="Find the faces in a photo (largest first, the order of face_index)",
    )
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        field = serializer.validated_data.get("field", "image")
        data = read_upload(request.FILES.get("image"), field=field)
        check_photo_type(data, field=field)  # what jobs accept (JPEG, PNG, WebP), sniffed, before decoding
        width, height = displayed_size(data)
        try:
            frame = decode_image(data, which=field, max_pixels=settings.MAX_IMAGE_PIXELS, max_side=DECODE_MAX_SIDE)
        except InvalidImage as exc:
            raise UploadRejected("corrupt_image", str(exc), field=field) from exc
        # Boxes are found on the reduced frame and reported in the full image's pixels.
        scale_x, scale_y = width / frame.shape[1], height / frame.shape[0]
        scale = np.array([scale_x, scale_y, scale_x, scale_y], dtype=np.float64)
        with _detect_lock:  # one detection at a time per process: dlib's detector is not thread-safe
            detector, landmarker = _face_models()
            detected = detect_with_landmarks(detector, lambda found: landmarker.refine(frame, found), frame)
        faces = [replace(face, box=face.box * scale) for face in detected]
        return Response(
            {
                "width": width,
                "height": height,
                # A source face whose shorter side is below this is refused at screening (too small).
                "min_face_px": settings.VISAGE_MIN_FACE_PX,
                "faces": [
                    {"index": i, "box": [round(float(v), 1) for v in face.box], "score": round(face.score, 3)}
                    for i, face in enumerate(faces)
                ],
            }
        )
