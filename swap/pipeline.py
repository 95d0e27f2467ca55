"""The engine behind one object: detect -> landmarks -> embed -> swap -> enhance -> paste.

Build one `Pipeline` per process (a worker, the CLI, a test session): every model is loaded
in the constructor and reused for every job. `swap_frame` is the per-frame entry point a
video worker can call in a loop.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import dlib
import numpy as np

from swap import selection
from swap.config import AUTO, PipelineConfig
from swap.errors import EngineError, FaceIndexOutOfRange, ModelMissing, NoFaceFound
from swap.face_detection.dlib_cnn import DlibCnnDetector
from swap.face_detection.dlib_hog import DlibHogDetector
from swap.face_detection.retry import RetryingDetector
from swap.face_landmarks.dlib_shape import DlibShapeLandmarker
from swap.face_recognition.dlib_resnet import DlibResnetRecognizer
from swap.inference import clock as inference_clock
from swap.inference import triton_client
from swap.models import canary, registry, s3cache
from swap.modes import FAST_DETECT_MAX_SIDE, ModePlan, plan_modes, requested_mode
from swap.swappers.classical import ClassicalSwapper
from swap.types import Face, FaceDetector, FaceMasker, SourceIdentity, SwapOptions, SwapResult

# "auto" tries the ONNX models the manifest lists for a stage, best first, when installed
# (registry.auto_order, the "auto" table of swap/models/manifest.json), else these defaults.
DLIB_DETECTOR, DLIB_LANDMARKER, DLIB_RECOGNIZER, CLASSICAL = (
    "dlib_hog",
    "dlib_shape68",
    "dlib_resnet",
    "classical",
)
NO_ENHANCER = "none"
# Standard's search where only the largest face counts (RetryingDetector's `largest_only`: a cheaper
# first pass that may leave out small faces beside it): a source photo, and a target whose job
# swaps its largest face.
LARGEST_FACE_MODE = "largest"
# prepare_source analyses every source photo in this mode, whatever mode the job runs.
SOURCE_ANALYSIS_MODE = LARGEST_FACE_MODE


class BackendMismatch(EngineError):
    code = "backend_mismatch"


def target_analysis_mode(options: SwapOptions, plans: dict[str, ModePlan], *, numbered: bool = False) -> str:
    """The mode `Pipeline._swap` analyses a target in, for a pipeline whose mode plans are `plans`
    (Pipeline.mode_capabilities(), or mode_capabilities(config) where no Pipeline is loaded).

    Faces picked by number (face_index, assignments) were numbered by the upload page's full
    detection: fast must not find a different set, so those are analysed in standard. A job that
    swaps only the largest face (faces "one") needs no smaller face: standard and hq analyse it in
    LARGEST_FACE_MODE."""
    if numbered or options.face_index is not None:
        return "standard"
    runs_as = plans[requested_mode(options.mode, options.enhance)].runs_as
    if runs_as != "fast" and swaps_largest_only(options):
        return LARGEST_FACE_MODE
    return runs_as


def swaps_largest_only(options: SwapOptions, *, numbered: bool = False) -> bool:
    """Only the target's largest face is swapped (faces "one", no face picked by number)."""
    return options.faces == "one" and options.face_index is None and not numbered


@dataclass
class StageTimer:
    timings_ms: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def stage(self, name: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings_ms[name] = self.timings_ms.get(name, 0.0) + (time.perf_counter() - start) * 1000.0


def build_detector(config: PipelineConfig | None = None) -> FaceDetector:
    """The face detector the engine uses for `config`: the configured one, or for "auto" the first
    installed ONNX detector, else dlib HOG with the config's detection settings.

    Anything that numbers faces the way the engine's `face_index` does (the upload page's face
    picker) must detect with this, not with a detector of its own choosing.
    """
    return _Backends(config or PipelineConfig.from_env())._build_detector()


# A face that only a rotated copy or the fallback detector found is kept when Face Mesh is sure of it
# (on an upright try from 0.2, so a face half behind a hand stays). On ../shared/faces as is, cut,
# shrunk, enlarged and rotated 25-180 degrees, faces found by retries scored 0.98-1.0 and false ones
# (a rocket's nose, a coffee cup, the Hubble deep field) 0.28-0.83; but a retry's true face can
# score less when covered: obama_3 with hair over the eyes 0.71, bryan_1 blurred 0.63 (both lost:
# a false face swapped and charged is worse than a clear "no face found").
RETRIED_MIN_PRESENCE = 0.9


def _sure_after_retries(face: Face) -> bool:
    presence = face.mesh_presence  # None: a landmarker with no presence score (dlib's)
    return presence is None or presence >= RETRIED_MIN_PRESENCE


def detect_with_landmarks(
    detector: FaceDetector, refine: Callable[[list[Face]], list[Face]] | None, frame: np.ndarray, **options
) -> list[Face]:
    """`detector`'s faces in `frame`, largest first, each given its landmarks by `refine` (a
    landmarker's refine on this frame; None: the detector's own points are kept), as Pipeline.analyse
    finds them. Face Mesh's refine drops a candidate it finds no face in; a RetryingDetector (BlazeFace,
    dlib) then goes on to its next try (a rotated copy, the fallback), so a false candidate does not
    hide a sideways face. `options` are RetryingDetector's (an ONNX detector makes one pass at its own
    size)."""

    def kept(found: list[Face], *, retried: bool = False) -> list[Face]:
        found = selection.by_size(found)
        if refine is None or not found:
            return found
        refined = refine(found)
        if retried:
            refined = [face for face in refined if _sure_after_retries(face)]
        return refined

    if hasattr(detector, "last_report"):
        return detector.detect(frame, verify=kept, **options)
    return kept(detector.detect(frame))


def build_landmarker(config: PipelineConfig | None = None):
    """The landmarker the engine uses for `config`. Face Mesh also drops a detection it finds no face
    in (a coffee cup BlazeFace scored 0.69), so a face picker numbering faces as `face_index` does
    must run it after build_detector's detector, as Pipeline.analyse does."""
    return _Backends(config or PipelineConfig.from_env())._build_landmarker()


def mode_capabilities(config: PipelineConfig | None = None) -> dict[str, ModePlan]:
    """What fast / standard / hq do on this install, WITHOUT loading any model: for the web side
    (quotes, the upload page) that has no Pipeline. Same answer as Pipeline.mode_capabilities()
    for the same config and models folder."""
    return _Backends(config or PipelineConfig.from_env()).planned_modes()


class _Backends:
    """How a config's backend names become adapters (shared by Pipeline and build_detector)."""

    def __init__(self, config: PipelineConfig) -> None:
        self.config = config

    def _build_detector(self) -> FaceDetector:
        detector = self._resolve(
            self.config.detector, registry.auto_order("detector"), DLIB_DETECTOR, self._dlib_detector
        )
        if getattr(detector, "wants_retries", False):
            detector.max_side = self.config.detect_max_side
            # BlazeFace: the same angle retries as dlib's HOG, then dlib (HOG, then its CNN) as the
            # fallback for what it misses.
            return RetryingDetector(
                detector, angles=self.config.detect_angles, fallback=self._dlib_fallback_factory()
            )
        return detector

    # -- backend choice -------------------------------------------------------------------

    def _allowed(self, name: str) -> bool:
        if not self._installed(name):
            return False
        try:
            registry.refuse_non_commercial(registry.get_spec(name))
        except EngineError:
            return False
        return True

    def planned_modes(self) -> dict[str, ModePlan]:
        """The mode plans for the backends this config resolves to (installed files and licence
        policy only; nothing is loaded)."""
        swapper = CLASSICAL
        requested = self.config.swapper
        if requested == AUTO:
            recognizer_ok = all(self._allowed(r) for r in registry.auto_order("recognizer")[:1])
            swappers = registry.auto_order("swapper")
            swapper = next((n for n in swappers if recognizer_ok and self._allowed(n)), CLASSICAL)
        elif requested != CLASSICAL:
            swapper = requested
        enhancer = None
        if self.config.enhancer == AUTO:
            enhancer = next((n for n in registry.auto_order("enhancer") if self._allowed(n)), None)
        elif self.config.enhancer != NO_ENHANCER:
            enhancer = self.config.enhancer
        size = 128
        if swapper != CLASSICAL:
            try:
                size = registry.get_spec(swapper).input_size[0]
            except KeyError:
                pass
        return plan_modes(
            swapper=swapper,
            classical=swapper == CLASSICAL,
            enhancer=enhancer,
            pixel_boost=self.config.pixel_boost,
            swapper_size=size,
        )

    def _installed(self, name: str) -> bool:
        """`name` is installed (or served), and so is every model its adapter loads with it."""
        return self._missing(name) is None

    def _missing(self, name: str) -> str | None:
        """The first of `name` and the models its adapter loads with it that is not installed."""
        try:
            required = registry.get_spec(name).requires
        except KeyError:
            required = ()
        return next((n for n in (name, *required) if not self._present(n)), None)

    def _present(self, name: str) -> bool:
        runtime = self.config.runtime
        if runtime is not None and runtime.inference == "triton":  # served, not installed here
            return name in triton_client.served_models(runtime.triton_url)
        try:
            return registry.is_installed(name, self.config.models_dir)
        except KeyError:  # not in the active manifest (an operator's own list)
            return False

    def _load_onnx(self, name: str, **options) -> object:
        missing = self._missing(name)
        if missing is not None and self._fetched_cold(name):
            missing = self._missing(name)
        if missing is not None:
            raise ModelMissing(missing, str(self.config.models_dir))
        return registry.load_adapter(name, self.config.models_dir, self.config.runtime, **options)

    def _fetched_cold(self, name: str) -> bool:
        """A model asked for by name but not on this node: fetch it (and what it requires) from the
        S3 model cache when VISAGE_MODELS_S3 names one (SHA-256 checked; swap.models.s3cache)."""
        runtime = self.config.runtime
        if (runtime is not None and runtime.inference == "triton") or not os.environ.get(s3cache.CACHE_ENV):
            return False
        try:
            names = s3cache.with_requirements([name], registry.manifest())
            for needed in names:
                if not self._present(needed):
                    s3cache.fetch_cold(registry.get_spec(needed), Path(self.config.models_dir))
        except (s3cache.ModelCacheError, KeyError) as exc:
            raise ModelMissing(name, f"{self.config.models_dir} nor the model cache ({exc})") from None
        return True

    def _first_installed(self, candidates: tuple[str, ...], **options) -> object | None:
        for name in candidates:
            if self._installed(name):
                try:
                    return self._load_onnx(name, **options)
                except EngineError:  # e.g. refused by licence policy: fall back to the next
                    continue
        return None

    def _resolve(self, requested: str, candidates: tuple[str, ...], default_name: str, default_factory):
        if requested == AUTO:
            return self._first_installed(candidates) or default_factory()
        if requested == default_name:
            return default_factory()
        return self._load_onnx(requested)

    def _dlib_detector(self):
        hog = DlibHogDetector(
            upsample=self.config.detect_upsample,
            max_side=self.config.detect_max_side,
            score_threshold=self.config.detect_score_threshold,
        )
        return RetryingDetector(hog, angles=self.config.detect_angles, fallback=self._fallback_factory())

    def _dlib_fallback_factory(self):
        """BlazeFace's fallback: dlib's HOG detector alone. On 100 hard variants of ../shared/faces
        (occluded, blurred, dark, rotated 60-180 degrees) neither HOG nor dlib's CNN found a face
        BlazeFace and its retries missed (89 found by each chain); a miss cost 0.13 s without a
        fallback, 0.3 s with HOG and ~1 s with HOG then the CNN (a faceless photo up to 1.8 s)."""
        if self.config.detect_fallback in ("", "none"):
            return None

        def build():
            return DlibHogDetector(
                upsample=self.config.detect_upsample,
                max_side=self.config.detect_max_side,
                score_threshold=self.config.detect_score_threshold,
            )

        return build

    def _build_landmarker(self):
        return self._resolve(
            self.config.landmarker, registry.auto_order("landmarker"), DLIB_LANDMARKER, self._dlib_landmarker
        )

    def _dlib_landmarker(self):
        return DlibShapeLandmarker()

    def _fallback_factory(self):
        if self.config.detect_fallback in ("", "none"):
            return None
        if self.config.detect_fallback != "dlib_cnn":
            raise ValueError(f"unknown fallback detector {self.config.detect_fallback!r} (dlib_cnn or none)")

        def build():
            return DlibCnnDetector()

        return build


class Pipeline(_Backends):
    def __init__(self, config: PipelineConfig | None = None) -> None:
        super().__init__(config or PipelineConfig.from_env())
        self.swapper = self._build_swapper()
        self.detector = self._build_detector()
        self.landmarker = self._build_landmarker()
        self.recognizer = self._build_recognizer()
        self.enhancer, self.enhancer_missing_reason = self._build_enhancer()
        self.maskers = self._build_maskers()

    def _dlib_recognizer(self):
        return DlibResnetRecognizer(self.config.runtime)

    def _classical(self):
        return ClassicalSwapper()

    def _build_swapper(self):
        requested = self.config.swapper
        if requested == AUTO:
            # An ONNX swapper is only useful with the recogniser that feeds it.
            recognizers = registry.auto_order("recognizer")[:1]
            for name in registry.auto_order("swapper"):
                if self._installed(name) and all(self._installed(r) for r in recognizers):
                    swapper = self._first_installed((name,), pixel_boost=self.config.pixel_boost)
                    if swapper is not None:
                        return swapper
            return self._classical()
        if requested == CLASSICAL:
            return self._classical()
        return self._load_onnx(requested, pixel_boost=self.config.pixel_boost)

    def _build_recognizer(self):
        needed = getattr(self.swapper, "needs_embedding", None)
        requested = self.config.recognizer
        if needed == "arcface512":
            if requested == DLIB_RECOGNIZER:
                raise BackendMismatch(
                    f"The {self.swapper.name} swapper needs ArcFace embeddings; recogniser {requested!r} makes dlib128."
                )
            name = registry.auto_order("recognizer")[0] if requested == AUTO else requested
            return self._load_onnx(name)
        return self._resolve(
            requested, registry.auto_order("recognizer"), DLIB_RECOGNIZER, self._dlib_recognizer
        )

    def _build_maskers(self) -> list[FaceMasker]:
        """Occlusion (XSeg) and region (BiSeNet) masks for an ONNX swapper, when installed: the
        swapper combines them with its box mask as FaceFusion does (element-wise minimum)."""
        if not hasattr(self.swapper, "maskers"):
            return []
        maskers: list[FaceMasker] = []
        for requested, candidates in (
            (self.config.occluder, registry.auto_order("occluder")),
            (self.config.face_parser, registry.auto_order("parser")),
        ):
            if requested == NO_ENHANCER:
                continue
            masker = self._first_installed(candidates) if requested == AUTO else self._load_onnx(requested)
            if masker is not None:
                maskers.append(masker)
        self.swapper.maskers = maskers
        return maskers

    def _build_enhancer(self) -> tuple[object | None, str | None]:
        requested = self.config.enhancer
        if requested == NO_ENHANCER:
            return None, "the face enhancer is disabled in this deployment"
        if requested == AUTO:
            candidates = registry.auto_order("enhancer")
            enhancer = self._first_installed(candidates)
            if enhancer is None:
                return None, f"no face enhancer is installed ({', '.join(candidates)})"
            return enhancer, None
        return self._load_onnx(requested), None

    def mode_capabilities(self) -> dict[str, ModePlan]:
        """What fast / standard / hq do with the models this pipeline loaded, and which mode's work
        each one really runs (`runs_as`): price a job by `runs_as`, or refuse the mode."""
        return plan_modes(
            swapper=self.swapper.name,
            classical=self.swapper.name == CLASSICAL,
            enhancer=self.enhancer.name if self.enhancer else None,
            pixel_boost=self.config.pixel_boost,
            swapper_size=getattr(self.swapper, "model_size", 128),
        )

    @property
    def backends(self) -> dict[str, str | None]:
        return {
            "detector": self.detector.name,
            "landmarker": self.landmarker.name,
            "recognizer": self.recognizer.name,
            "swapper": self.swapper.name,
            "enhancer": self.enhancer.name if self.enhancer else None,
            **({"masks": "+".join(m.name for m in self.maskers)} if self.maskers else {}),
        }

    def _fallback_name(self) -> str:
        """The detector the retries end with: dlib's HOG behind another detector, the configured one
        behind dlib's HOG, or "none"."""
        if self.config.detect_fallback in ("", "none"):
            return "none"
        return DLIB_DETECTOR if self.detector.name != DLIB_DETECTOR else self.config.detect_fallback

    def models_used(self) -> list[dict]:
        """Every model this pipeline runs (the fallback detector too), with its version and licence:
        for a job's record ("models" in its engine block)."""
        stages = [("detector", self.detector.name)]
        if hasattr(self.detector, "last_report") and self._fallback_name() != "none":
            stages.append(("fallback detector", self._fallback_name()))
        stages += [("landmarker", self.landmarker.name), ("recognizer", self.recognizer.name)]
        stages += [
            ("swapper", self.swapper.name),
            ("enhancer", self.enhancer.name if self.enhancer else None),
        ]
        stages += [("mask", m.name) for m in self.maskers]
        return [
            {"stage": stage, "name": name, **self._model_terms(name)}
            for stage, name in stages
            if name is not None and name != CLASSICAL
        ]

    def _model_terms(self, name: str) -> dict:
        try:
            spec = registry.get_spec(name)
        except KeyError:
            dlib_model = next((m for m in registry.DLIB_MODELS if m.name == name), None)
            return {
                "version": f"dlib {dlib.__version__}",
                "licence": dlib_model.licence if dlib_model else "",
                "non_commercial": bool(dlib_model and dlib_model.non_commercial),
            }
        version = canary.version_for(name, registry.stable_version(name, self.config.models_dir))
        return {"version": version, "licence": spec.licence, "non_commercial": spec.non_commercial}

    # -- running ----------------------------------------------------------------------------

    def warm_up(self) -> None:
        """One tiny inference per model, so the first job doesn't pay for lazy initialisation."""
        frame = np.full((128, 128, 3), 127, np.uint8)
        dummy = Face(
            box=np.array([32, 32, 96, 96], np.float32),
            score=1.0,
            landmarks_5=np.array([[52, 56], [76, 56], [64, 68], [54, 80], [74, 80]], np.float32),
        )
        self._detect(frame, "fast", None)  # no retries on a blank frame
        refined = self.landmarker.refine(frame, [dummy])
        if not refined or refined[0].landmarks_68 is None:
            # Face Mesh drops a blank frame's "face" (no presence): the recogniser still gets a shape.
            angles = np.linspace(0, 2 * np.pi, 68, endpoint=False)
            ring = np.stack([64 + 28 * np.cos(angles), 64 + 28 * np.sin(angles)], axis=1).astype(np.float32)
            refined = [replace(dummy, landmarks_68=ring)]
        self.recognizer.embed(frame, refined)

    def analyse(
        self,
        frame: np.ndarray,
        *,
        embed: bool = True,
        timer: StageTimer | None = None,
        mode: str = "standard",
        report: dict | None = None,
        retries: bool = True,
    ) -> list[Face]:
        """All faces in `frame`, largest first, with landmarks (and embeddings if `embed`).

        mode "fast" searches a smaller copy and never retries; `retries=False` skips the rotated
        retries and the fallback in any mode (a video tracker's quick look); `report` (a dict)
        receives how the faces were found (retries, fallback, their time)."""
        timer = timer or StageTimer()
        landmarks = StageTimer()

        def refine(found: list[Face]) -> list[Face]:
            with landmarks.stage("landmarks"):
                return self._timed(self.landmarker, lambda: self.landmarker.refine(frame, found))

        # fast with an ONNX detector: its own 5 points align the face
        refine_or_none = None if self._skips_landmarks(mode) else refine
        with timer.stage("detect"):
            faces = self._timed(self.detector, lambda: self._detect(frame, mode, refine_or_none, retries))
        if refine_or_none is not None:  # the landmarks were found during detection: their own stage
            spent = landmarks.timings_ms.get("landmarks", 0.0)
            timer.timings_ms["detect"] -= spent
            timer.timings_ms["landmarks"] = timer.timings_ms.get("landmarks", 0.0) + spent
        last = getattr(self.detector, "last_report", None)
        if report is not None and last is not None:
            report.update(last.as_dict())
            if last.retry_ms:
                timer.timings_ms["detect_retry"] = last.retry_ms
        if faces and embed:
            with timer.stage("embed"):
                self._embed(frame, faces)
        return faces

    def _skips_landmarks(self, mode: str) -> bool:
        """Fast with an ONNX swapper and a detector whose 5 points are exact (yoloface): no landmarker.
        BlazeFace's mouth corners are guessed from its mouth centre, so its faces always get the mesh."""
        detector = getattr(self.detector, "primary", self.detector)
        exact_five = self.detector.name != DLIB_DETECTOR and not getattr(detector, "rough_landmarks", False)
        return mode == "fast" and self.swapper.name != CLASSICAL and exact_five

    def analysis_signature(self, mode: str) -> dict:
        """Everything that decides what `analyse(frame, mode=mode)` returns, as plain data: the
        detector with its settings in that mode, the landmarker (None when that mode skips it),
        the recogniser, each model's version for the current job (canary routing) and manifest
        checksum, and the ONNX runtime. Two pipelines with equal signatures analyse a frame
        identically, so a stored analysis may be reused (swap.face_analysis.signature_digest)."""
        fast = mode == "fast"
        largest_only = mode == LARGEST_FACE_MODE
        detector: dict = {"backend": self._backend_identity(self.detector)}
        if hasattr(self.detector, "last_report"):  # dlib HOG behind RetryingDetector: our settings apply
            detector.update(
                upsample=self.config.detect_upsample,
                max_side=min(FAST_DETECT_MAX_SIDE, self.config.detect_max_side)
                if fast
                else self.config.detect_max_side,
                score_threshold=self.config.detect_score_threshold,
                retry_angles=[] if fast else list(self.config.detect_angles),
                fallback="none" if fast else self._fallback_name(),
                largest_only=largest_only,
            )
        return {
            # analyse treats every other mode as standard
            "mode": "fast" if fast else LARGEST_FACE_MODE if largest_only else "standard",
            "detector": detector,
            "landmarker": None if self._skips_landmarks(mode) else self._backend_identity(self.landmarker),
            "recognizer": {
                **self._backend_identity(self.recognizer),
                "embedding_kind": self.recognizer.embedding_kind,
            },
        }

    def _backend_identity(self, backend: object) -> dict:
        """A backend's name and, for a model from the manifest, the version this job runs, its
        checksum and where it runs (CUDA and CPU results differ in the last bits)."""
        name = backend.name
        try:
            spec = registry.get_spec(name)
        except KeyError:  # dlib: its model files ship with the installed dlib packages
            # dlib's ResNet runs in onnxruntime (DlibResnetRecognizer.engine): its file and runtime
            return {"name": name, "dlib": dlib.__version__, **getattr(backend, "engine", {})}
        version = canary.version_for(name, registry.stable_version(name, self.config.models_dir))
        runtime = self.config.runtime
        if hasattr(backend, "model") and hasattr(backend.model, "runtime_identity"):  # LiteRT (MediaPipe's)
            where = backend.model.runtime_identity
        elif runtime is not None:
            url = runtime.triton_url if runtime.inference == "triton" else ""
            where = [runtime.inference, url, *runtime.resolved_providers()]
        else:
            where = None
        return {
            "name": name,
            "version": version,
            "sha256": spec.sha256 if version == registry.manifest_version(name) else "",
            "runtime": where,
        }

    def _detect(
        self, frame: np.ndarray, mode: str, refine: Callable[[list[Face]], list[Face]] | None, retries: bool = True
    ) -> list[Face]:
        if mode == "fast":
            options = {"retries": False, "max_side": min(FAST_DETECT_MAX_SIDE, self.config.detect_max_side)}
        else:
            options = {"largest_only": mode == LARGEST_FACE_MODE, "retries": retries}
        return detect_with_landmarks(self.detector, refine, frame, **options)

    def embed_faces(self, frame: np.ndarray, faces: list[Face]) -> None:
        """Give `faces` (of `frame`) this pipeline's embeddings, in one recogniser call."""
        if faces:
            self._embed(frame, faces)

    def _embed(self, frame: np.ndarray, faces: list[Face]) -> None:
        vectors = self._timed(self.recognizer, lambda: self.recognizer.embed(frame, faces))
        for face, vec in zip(faces, vectors, strict=True):
            face.embedding = np.asarray(vec, np.float32)
            face.embedding_kind = self.recognizer.embedding_kind

    def prepare_source(
        self, images: list[np.ndarray], *, faces: list[list[Face] | None] | None = None
    ) -> SourceIdentity:
        """The source identity from one or more photos of the same person (largest face in each).

        Photos without a face are ignored; if none has one, NoFaceFound("source"). `faces`, one
        entry per photo, gives a photo's analysis (as `analyse(image, mode=SOURCE_ANALYSIS_MODE)`
        returns it, e.g. from a cache) instead of analysing it; None analyses that photo.
        """
        given = faces if faces is not None else [None] * len(images)
        if len(given) != len(images):
            raise ValueError(f"{len(given)} face analyses for {len(images)} source photos")
        chosen: list[tuple[np.ndarray, Face]] = []
        analyses: list[list[Face]] = []
        costs_ms: list[float] = []
        timer = StageTimer()
        start = time.perf_counter()
        with inference_clock.session() as clock:
            for image, known in zip(images, given, strict=True):
                before_ms = clock.inference_ms
                found = (
                    self.analyse(image, embed=False, mode=SOURCE_ANALYSIS_MODE, timer=timer)
                    if known is None
                    else known
                )
                if found:
                    if found[0].embedding is None:
                        with timer.stage("embed"):
                            self._embed(image, found[:1])
                    chosen.append((image, found[0]))
                analyses.append(found)
                costs_ms.append(clock.inference_ms - before_ms)
        if not chosen:
            raise NoFaceFound("source")
        embedding = np.mean([face.embedding for _, face in chosen], axis=0).astype(np.float32)
        image, face = chosen[0]
        return SourceIdentity(
            image=image,
            face=face,
            embedding=embedding,
            embedding_kind=self.recognizer.embedding_kind,
            photos=chosen,
            analyses=analyses,
            analysis_inference_ms=costs_ms,
            prepare_ms=(time.perf_counter() - start) * 1000.0,
            stage_ms=timer.timings_ms,
            inference_ms=clock.inference_ms,
        )

    def swap_frame(
        self,
        source: SourceIdentity,
        frame: np.ndarray,
        options: SwapOptions | None = None,
        *,
        faces: list[Face] | None = None,
    ) -> SwapResult:
        """Swap the faces of one frame. `faces` (with landmarks, largest first) skips detection:
        a video tracker passes the faces it followed from the previous frame."""
        options = options or SwapOptions()
        return self._swap(
            frame, options, faces, lambda found: [(source, selection.select_faces(found, options))]
        )

    def swap_assigned(
        self,
        sources: list[SourceIdentity],
        frame: np.ndarray,
        assignments: list[tuple[int, int]],
        options: SwapOptions | None = None,
        *,
        faces: list[Face] | None = None,
    ) -> SwapResult:
        """Different people into different faces: `assignments` pairs a target face index (largest
        first, as `face_index`) with an index into `sources`. Faces of one source share a batch.
        `faces` (the target's analysis, largest first) skips detection."""
        options = options or SwapOptions()

        def assign(found: list[Face]) -> list[tuple[SourceIdentity, list[Face]]]:
            groups: dict[int, list[Face]] = {}
            for face_index, source_index in assignments:
                if not 0 <= face_index < len(found):
                    raise FaceIndexOutOfRange(face_index, len(found), what="face")
                groups.setdefault(source_index, []).append(found[face_index])
            return [(sources[index], chosen) for index, chosen in groups.items()]

        return self._swap(frame, options, faces, assign, numbered=True)

    def _swap(
        self, frame, options: SwapOptions, faces: list[Face] | None, assign, *, numbered: bool = False
    ) -> SwapResult:
        """Detect (unless given), let `assign` pair source identities with target faces, swap each
        group in batches, enhance, and report timings and inference time."""
        timer = StageTimer()
        start = time.perf_counter()
        asked = requested_mode(options.mode, options.enhance)
        plans = self.mode_capabilities()
        plan = plans[asked]
        mode = plan.runs_as
        detection: dict = {}
        with inference_clock.session() as clock:
            # Target embeddings cost a ResNet/ArcFace run per face; only reference mode needs them.
            before_ms = clock.inference_ms
            if faces is None:
                faces = self.analyse(
                    frame,
                    embed=selection.needs_embeddings(options),
                    timer=timer,
                    mode=target_analysis_mode(options, plans, numbered=numbered),
                    report=detection,
                )
            elif faces and selection.needs_embeddings(options) and faces[0].embedding is None:
                with timer.stage("embed"):
                    self._embed(frame, faces)
            analysis_ms = clock.inference_ms - before_ms
            if not faces:
                raise NoFaceFound("target")
            groups = [(source, chosen) for source, chosen in assign(faces) if chosen]
            if not groups:
                raise NoFaceFound("target")
            for source, _ in groups:
                if source.embedding_kind != self.recognizer.embedding_kind:
                    raise BackendMismatch(
                        f"The source was prepared with {source.embedding_kind} embeddings; this pipeline "
                        f"uses {self.recognizer.embedding_kind}."
                    )

            image = frame
            with timer.stage("swap"):
                for source, chosen in groups:
                    for i in range(0, len(chosen), max(1, self.config.max_batch)):
                        batch = chosen[i : i + self.config.max_batch]
                        image = self._timed(
                            self.swapper,
                            lambda s=source, b=batch, im=image: self._swap_batch(s, im, b, plan),
                        )
            used = [face for _, chosen in groups for face in chosen]

            enhancer_name, skipped = None, None
            if asked == "hq" and not plan.enhance:
                skipped = self.enhancer_missing_reason
            if plan.enhance:
                if self.enhancer is None:
                    skipped = self.enhancer_missing_reason
                else:
                    with timer.stage("enhance"):
                        image = self._timed(
                            self.enhancer,
                            lambda im=image: self.enhancer.enhance(im, used, options.enhancer_blend),
                        )
                    enhancer_name = self.enhancer.name

        timings = {
            name: 0.0 for name in ("detect", "detect_retry", "landmarks", "embed", "swap", "enhance", "paste")
        }
        timings.update(timer.timings_ms)
        paste_ms = clock.stages_ms.get("paste", 0.0)
        timings["paste"] = paste_ms
        timings["swap"] = max(0.0, timings["swap"] - paste_ms)
        timings["total"] = (time.perf_counter() - start) * 1000.0
        return SwapResult(
            image=image,
            faces_used=used,
            timings_ms=timings,
            swapper=self.swapper.name,
            enhancer=enhancer_name,
            enhancer_skipped_reason=skipped,
            inference_ms=clock.inference_ms,
            mode_requested=asked,
            mode=mode,
            mode_steps=plan.steps,
            mode_note=plan.note,
            detection=detection,
            target_faces=list(faces),
            target_analysis_inference_ms=analysis_ms,
        )

    def _swap_batch(
        self, source: SourceIdentity, image: np.ndarray, batch: list[Face], plan: ModePlan
    ) -> np.ndarray:
        if getattr(self.swapper, "supports_modes", False):
            return self.swapper.swap(source, image, batch, mode=plan.runs_as, pixel_boost=plan.pixel_boost)
        return self.swapper.swap(source, image, batch)

    def swap_image(
        self,
        source: np.ndarray | list[np.ndarray],
        target: np.ndarray,
        options: SwapOptions | None = None,
        *,
        source_faces: list[list[Face] | None] | None = None,
        target_faces: list[Face] | None = None,
    ) -> SwapResult:
        """A source photo (or several of one person) onto one target photo; timings and inference
        include the source's analysis. `source_faces` / `target_faces` give analyses already made
        (prepare_source's `faces`, swap_frame's `faces`): those images are not analysed again."""
        identity = self.prepare_source(source if isinstance(source, list) else [source], faces=source_faces)
        result = self.swap_frame(identity, target, options, faces=target_faces)
        result.timings_ms["source"] = identity.prepare_ms
        result.timings_ms["total"] += identity.prepare_ms
        result.inference_ms += identity.inference_ms
        return result

    @staticmethod
    def _timed(adapter: object, call):
        """Run an adapter call; count all of it as inference unless the adapter reports its own."""
        if getattr(adapter, "reports_inference_time", False):
            return call()
        with inference_clock.measure(getattr(adapter, "name", type(adapter).__name__), "cpu"):
            return call()
