"""POST /api/v1/faces — the faces in a photo, for the upload page's "pick the face to replace".

Boxes are in the decoded image's pixels (EXIF orientation applied, as the browser shows it), largest
first: the order the engine's `face_index` refers to (swap.selection.by_size).
"""

from __future__ import annotations

import threading

from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from swap.errors import InvalidImage
from swap.image_io import decode_image
from swap.pipeline import build_detector
from swap.selection import by_size
from webapp.media.validation import UploadRejected, read_upload

from .throttles import ReadThrottle

_detector = None
_detector_lock = threading.Lock()
_detect_lock = threading.Lock()


def face_detector():
    """The engine's own detector (swap.pipeline.build_detector: VISAGE_DETECTOR, or "auto" = the installed
    ONNX detector, else dlib HOG with the engine's detection settings), built once per process, so the
    boxes are numbered as the engine's `face_index` numbers them."""
    global _detector
    with _detector_lock:
        if _detector is None:
            _detector = build_detector()
        return _detector


def reset_face_detector() -> None:
    """Forget the detector (tests that change VISAGE_DETECTOR or the models directory)."""
    global _detector
    with _detector_lock:
        _detector = None


class FaceDetectView(APIView):
    parser_classes = [MultiPartParser, FormParser]
    throttle_classes = [ReadThrottle]

    class InputSerializer(serializers.Serializer):
        image = serializers.FileField(required=False, help_text="The photo to look for faces in")

    @extend_schema(
        operation_id="faces_detect",
        request={"multipart/form-data": InputSerializer},
        responses={
            200: OpenApiResponse(
                description="{width, height, min_face_px, faces: [{index, box: [x1, y1, x2, y2], score}]}"
            ),
            400: OpenApiResponse(description="problem+json"),
        },
        summary="Find the faces in a photo (largest first, the order of face_index)",
    )
    def post(self, request):
        field = request.data.get("field") if request.data.get("field") in ("source", "target") else "image"
        data = read_upload(request.FILES.get("image"), field=field)
        try:
            frame = decode_image(data, which=field, max_pixels=settings.MAX_IMAGE_PIXELS)
        except InvalidImage as exc:
            raise UploadRejected("corrupt_image", str(exc), field=field) from exc
        with _detect_lock:  # one detection at a time per process: dlib's detector is not thread-safe
            faces = by_size(face_detector().detect(frame))
        height, width = frame.shape[:2]
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
