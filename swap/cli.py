"""`python -m swap run ...` (swap one photo) and `python -m swap models ...` (model files).

Errors a user can cause end the command with exit status 1 and ONE line on stderr.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from swap.config import PipelineConfig
from swap.errors import EngineError
from swap.image_io import decode_image, encode_image
from swap.models.cli import add_subparser
from swap.pipeline import Pipeline, mode_capabilities
from swap.serve.launcher import add_subparser as add_serve
from swap.types import SwapOptions

EXIT_ENGINE_ERROR = 1
OUTPUT_FORMATS = {".png": "png", ".jpg": "jpeg", ".jpeg": "jpeg", ".webp": "webp"}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m swap", description="Visage face-swap engine")
    subparsers = parser.add_subparsers(dest="command", required=True)

    run = subparsers.add_parser("run", help="swap the source face into a target photo")
    run.add_argument(
        "--source",
        type=Path,
        action="append",
        required=True,
        help="photo of the person to swap in (repeat for several photos of them)",
    )
    run.add_argument("--target", type=Path, required=True, help="photo whose face(s) get replaced")
    run.add_argument("--output", type=Path, required=True, help="result image (.png, .jpg or .webp)")
    run.add_argument(
        "--swapper",
        default=None,
        help="classical (default without models) or an installed ONNX swapper: inswapper_128, "
        "hyperswap_1a_256, ghost_1_256…",
    )
    run.add_argument("--enhancer", default=None, help="enhance the result with this model, e.g. gfpgan_1.4")
    run.add_argument(
        "--mode",
        choices=("fast", "standard", "hq"),
        default="standard",
        help="fast, standard or hq (what each does: python -m swap modes)",
    )
    run.add_argument("--hq", action="store_true", help="same as --mode hq")
    run.add_argument(
        "--faces",
        choices=("one", "many", "reference"),
        default="one",
        help="largest face, every face, or faces matching --reference-index",
    )
    run.add_argument("--face-index", type=int, default=None, help="swap only this face (0 = largest)")
    run.add_argument(
        "--reference-index",
        type=int,
        default=None,
        help="with --faces reference: the target face whose look-alikes are swapped (default 0)",
    )
    run.add_argument("--models-dir", type=Path, default=None, help="where ONNX model files live")
    run.add_argument("--quality", type=_quality, default=92, help="JPEG/WebP quality, 1-100")
    run.set_defaults(func=_run)

    modes = subparsers.add_parser("modes", help="what fast / standard / hq do with the installed models")
    modes.add_argument("--models-dir", type=Path, default=None, help="where ONNX model files live")
    modes.set_defaults(func=_modes)

    add_subparser(subparsers)
    add_serve(subparsers)
    return parser


def _read(path: Path, which: str, max_pixels: int):
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise EngineError(f"Cannot read the {which} file {str(path)!r}: {exc.strerror or exc}.") from exc
    return decode_image(data, which=which, max_pixels=max_pixels)


def _run(args: argparse.Namespace) -> int:
    fmt = OUTPUT_FORMATS.get(args.output.suffix.lower())
    if fmt is None:
        raise EngineError(f"Unsupported output type {args.output.suffix!r}; use .png, .jpg or .webp.")
    config = _config_from_env()
    if args.models_dir:
        config = replace(config, models_dir=args.models_dir)
    if args.swapper:
        config = replace(config, swapper=args.swapper)
    if args.enhancer:
        config = replace(config, enhancer=args.enhancer)

    sources = [_read(p, "source", config.max_pixels) for p in args.source]
    target = _read(args.target, "target", config.max_pixels)
    pipeline = Pipeline(config)
    options = SwapOptions(
        faces=args.faces,
        face_index=args.face_index,
        reference_index=args.reference_index,
        mode="hq" if (args.hq or args.enhancer) else args.mode,
    )
    identity = pipeline.prepare_source(sources)
    result = pipeline.swap_frame(identity, target, options)
    try:
        args.output.write_bytes(encode_image(result.image, fmt, quality=args.quality))
    except OSError as exc:
        raise EngineError(
            f"Cannot write the output file {str(args.output)!r}: {exc.strerror or exc}."
        ) from exc
    if result.enhancer_skipped_reason:
        print(f"note: not enhanced: {result.enhancer_skipped_reason}", file=sys.stderr)
    if result.mode != result.mode_requested:
        print(f"note: mode {result.mode_requested} ran as {result.mode}: {result.mode_note}", file=sys.stderr)
    t = result.timings_ms
    print(
        f"swapped {len(result.faces_used)} face(s) with {result.swapper} ({result.mode}) in {t['total']:.0f} ms "
        f"-> {args.output}"
    )
    return 0


def _modes(args: argparse.Namespace) -> int:
    config = _config_from_env()
    if args.models_dir:
        config = replace(config, models_dir=args.models_dir)
    for name, plan in mode_capabilities(config).items():
        runs = "" if plan.runs_as == name else f" (runs as {plan.runs_as}: {plan.note})"
        print(f"{name}{runs}")
        for step in plan.steps:
            print(f"  - {step}")
    return 0


def _quality(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= 100:
        raise argparse.ArgumentTypeError(f"{value} is not between 1 and 100")
    return value


def _config_from_env() -> PipelineConfig:
    """The VISAGE_* settings; a bad one is an EngineError (one line), not a traceback."""
    try:
        return PipelineConfig.from_env()
    except ValueError as exc:
        raise EngineError(str(exc)) from None


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except EngineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ENGINE_ERROR
    except KeyError as exc:  # unknown model name from the registry
        print(f"error: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return EXIT_ENGINE_ERROR
