"""Processing modes: what `fast`, `standard` and `hq` actually do on this install.

Each mode is priced differently, so each must do different, documented work — and when an
install cannot do more for a mode than for a cheaper one, the mode *runs as* the cheaper one
and says so (`ModePlan.runs_as`), so billing charges the work that ran, never the label asked.

Classical swapper (no downloaded models):
- fast: detection on a copy of at most 640 px, no angle retries or fallback detector, landmark
  warp from the first source photo, global colour match, feathered alpha blend.
- standard: detection at up to `detect_max_side` px with angle retries and the fallback
  detector, per target face the best-matching source photo (pose/expression), target mouth and
  eye openings kept, occlusion-aware mask, frame-edge mask, local lighting match, grain,
  sharpness and JPEG-blockiness match, Poisson blend.
- hq: standard's steps, plus a 2× supersampled Lanczos warp of a source face that is reduced onto
  the target (an enlarged one has no finer detail to keep), every source photo blended by pose
  similarity, the face's fine detail (its two finest octaves: texture, not the structure that
  carries identity) matched to its picture per octave band (one gain per band instead of
  standard's single capped sharpen or blur; an octave finer than an enlarged source's own
  resolution holds interpolation texture, not the source's detail, and is boosted no more than
  standard's sharpen, so a small source photo stays as recognisable as in standard), and the
  Poisson result joined by a one-level multi-band (Laplacian pyramid) blend that keeps the grain through the rim instead of one feather; plus
  the enhancer when installed. On ../shared/faces (bench/quality.py, 315 swaps a mode) hq's seam
  energy is 0.99 against standard's 0.96 (1 = no edge added, no grain lost), its sharpness error
  (mean |ln face/picture ratio|) 0.16 against 0.18, its mouth SSIM 0.655 against 0.652, the
  colour step it adds at the border the same (0.10 dE), at about standard's identity (dlib distance
  to the source 0.512 vs 0.510; paired per swap +0.002, 95 % CI +0.001..+0.003).

ONNX swappers (inswapper, hyperswap, ghost):
- fast: the detector's own 5 points (no landmark model), no pixel boost, box mask only.
- standard: landmarks, the configured pixel boost, box × occlusion × region masks as installed.
- hq: the enhancer when installed; else twice the pixel boost (up to 512); else runs as standard.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

MODES: tuple[str, ...] = ("fast", "standard", "hq")
FAST_DETECT_MAX_SIDE = 640
MAX_PIXEL_BOOST = 512


@dataclass(frozen=True)
class ModePlan:
    mode: str  # as asked
    runs_as: str  # the mode whose work is done here: charge this one
    steps: tuple[str, ...]
    note: str | None = None  # why runs_as differs from mode
    pixel_boost: int | None = None  # ONNX swappers: the crop size used in this mode
    enhance: bool = False

    def as_dict(self) -> dict[str, object]:
        return {
            "mode": self.mode,
            "runs_as": self.runs_as,
            "steps": list(self.steps),
            "note": self.note,
            "pixel_boost": self.pixel_boost,
            "enhance": self.enhance,
        }


def requested_mode(mode: str | None, enhance: bool = False) -> str:
    """The mode asked for; the legacy `enhance=True` with the default mode means hq."""
    mode = mode or "standard"
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r} ({', '.join(MODES)})")
    if enhance and mode == "standard":
        return "hq"
    return mode


def mode_ran(asked: str, *, reported: Iterable[object] = (), enhanced: bool | None = None) -> str:
    """The mode whose work ran, which billing charges (never a dearer one asked for).

    `reported`: what the engine said it ran (SwapResult.mode; a job's engine notes), the first that
    names a mode wins. Without a report: `asked`, except that hq known to have enhanced nothing
    (`enhanced` False) did standard's work; `enhanced` None (not known) leaves `asked`.
    """
    for mode in reported:
        if isinstance(mode, str) and mode in MODES:
            return mode
    if asked == "hq" and enhanced is False:
        return "standard"
    return asked


def plan_modes(
    *, swapper: str, classical: bool, enhancer: str | None, pixel_boost: int = 128, swapper_size: int = 128
) -> dict[str, ModePlan]:
    """What each mode does with this swapper and enhancer (None = no enhancer usable)."""
    if classical:
        fast = ModePlan(
            "fast",
            "fast",
            (
                f"face detection on a copy of at most {FAST_DETECT_MAX_SIDE} px, no retries",
                "68-point landmark warp from the first source photo",
                "global colour match (grayscale target: grayscale face)",
                "feathered alpha blend",
            ),
        )
        standard_steps = (
            "face detection with angle retries and a fallback detector",
            "best-matching source photo per face (head pose, expression)",
            "target mouth and eye openings kept where the expressions differ",
            "occlusion- and frame-edge-aware mask",
            "local lighting match from the target's skin",
            "grain, sharpness and JPEG-blockiness match",
            "Poisson blend",
        )
        standard = ModePlan("standard", "standard", standard_steps)
        hq_steps = standard_steps + (
            "2x supersampled Lanczos warp of a reduced source face",
            "all source photos blended by pose similarity",
            "face detail matched to the picture per octave band",
            "multi-band (Laplacian pyramid) blend",
        )
        if enhancer:
            hq_steps += (f"face enhancer {enhancer}",)
        hq = ModePlan("hq", "hq", hq_steps, enhance=bool(enhancer))
        return {"fast": fast, "standard": standard, "hq": hq}

    boost = max(swapper_size, pixel_boost)
    fast = ModePlan(
        "fast",
        "fast",
        (
            "face detection",
            "detector 5-point alignment (no landmark model)",
            f"{swapper} at {swapper_size} px",
            "box mask",
        ),
        pixel_boost=swapper_size,
    )
    standard_steps = (
        "face detection",
        "landmark alignment",
        f"{swapper} at {boost} px",
        "box x occlusion x region masks as installed",
    )
    standard = ModePlan("standard", "standard", standard_steps, pixel_boost=boost)
    if enhancer:
        hq = ModePlan(
            "hq", "hq", standard_steps + (f"face enhancer {enhancer}",), pixel_boost=boost, enhance=True
        )
    elif boost * 2 <= MAX_PIXEL_BOOST:
        hq = ModePlan(
            "hq",
            "hq",
            standard_steps[:2]
            + (f"{swapper} at {boost * 2} px (pixel boost, {(boost * 2 // swapper_size) ** 2} tiles)",)
            + standard_steps[3:],
            pixel_boost=boost * 2,
        )
    else:
        hq = ModePlan(
            "hq",
            "standard",
            standard_steps,
            note="no face enhancer is installed and the swapper already runs at its largest size; hq does the same work as standard here",
            pixel_boost=boost,
        )
    return {"fast": fast, "standard": standard, "hq": hq}
