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
from swap.pipeline import Pipeline
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
    run.add_argument("--swapper", default=None, help="classical (default without models) or inswapper_128")
    run.add_argument("--enhancer", default=None, help="enhance the result with this model, e.g. gfpgan_1.4")
    run.add_argument("--hq", action="store_true", help="enhance with the installed enhancer, if any")
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
    run.add_argument("--quality", type=int, default=92, help="JPEG/WebP quality")
    run.set_defaults(func=_run)

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
    config = PipelineConfig.from_env()
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
        enhance=bool(args.hq or args.enhancer),
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
    t = result.timings_ms
    print(
        f"swapped {len(result.faces_used)} face(s) with {result.swapper} in {t['total']:.0f} ms "
        f"-> {args.output}"
    )
    return 0


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
