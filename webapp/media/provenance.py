"""C2PA Content Credentials on every result, with c2pa-python.

Each image or video result is signed with a manifest that says it is AI-generated
(`c2pa.actions`: `c2pa.created` + `c2pa.edited` with the IPTC digital source type
`trainedAlgorithmicMedia`), names the service and the job's content id, carries a SHA-256 of the
inputs (never the inputs), the engine and model names, and an ingredient reference for the target
(title, format and hash only: no thumbnail of anybody's photo goes into the file).

The signing key and certificate chain come from settings (`VISAGE_C2PA_CERT`/`VISAGE_C2PA_KEY` or
their `_FILE` variants; ES256/ES384/PS256 or Ed25519, told from the key). Without them, outside
production, a development chain (a root CA and a signer certificate) is generated once into
`DATA_DIR/c2pa/` — `make run` says so at start. Readers trust the chain's root and any
`VISAGE_C2PA_TRUST_ANCHORS`, so a file we signed reads back as "Trusted", one signed by an unknown
chain as "Valid", and a tampered one as "Invalid".
"""

from __future__ import annotations

import datetime
import hashlib
import io
import json
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path

import c2pa
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from django.conf import settings

from .aigc import IPTC_SOURCE_TYPE, LABEL

logger = logging.getLogger(__name__)

ASSERTION_LABEL = "org.visage.aigc"  # our own assertion: service, content id, inputs hash, engine
SIGNABLE_TYPES = ("image/jpeg", "image/png", "image/webp", "video/mp4")
STATE_TRUSTED, STATE_VALID, STATE_INVALID = "Trusted", "Valid", "Invalid"


class ProvenanceError(Exception):
    """Signing failed or the configured chain cannot be used."""


# --- the signing chain -----------------------------------------------------------------------------


@dataclass(frozen=True)
class SigningChain:
    cert_pem: bytes  # the signer's certificate first, then its issuers
    key_pem: bytes
    alg: str  # c2pa's name: es256, es384, ps256, ed25519
    trust_anchors_pem: bytes  # roots a reader here trusts
    development: bool = False

    @property
    def signer_name(self) -> str:
        cert = x509.load_pem_x509_certificates(self.cert_pem)[0]
        names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
        return str(names[0].value) if names else cert.subject.rfc4514_string()


def algorithm_for(key_pem: bytes) -> str:
    key = serialization.load_pem_private_key(key_pem, password=None)
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return "ed25519"
    if isinstance(key, ec.EllipticCurvePrivateKey):
        names = {"secp256r1": "es256", "secp384r1": "es384", "secp521r1": "es512"}
        if key.curve.name in names:
            return names[key.curve.name]
    if isinstance(key, rsa.RSAPrivateKey):
        return "ps256"
    raise ProvenanceError("VISAGE_C2PA_KEY must be an Ed25519, EC (P-256/384/521) or RSA private key in PEM")


def _name(common_name: str, organization: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, common_name[:64]),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization[:64]),
        ]
    )


def generate_chain(
    *, alg: str = "es256", service: str = "Visage", development: bool = True
) -> tuple[bytes, bytes, bytes]:
    """A root CA and a signer certificate: (chain PEM, signer key PEM, root PEM). The development
    chain of `make run`, or (development=False) an installation's own chain for the deploy files.

    C2PA validators want a signer certificate issued by a CA (not self-signed), with
    digitalSignature key usage and an allowed extended key usage (emailProtection).
    """
    now = datetime.datetime.now(datetime.UTC)
    root_key = ec.generate_private_key(ec.SECP256R1())
    qualifier = " development" if development else ""
    root_name = _name(f"{service}{qualifier} root CA", service)
    root = (
        x509.CertificateBuilder()
        .subject_name(root_name)
        .issuer_name(root_name)
        .public_key(root_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(root_key.public_key()), critical=False)
        .sign(root_key, hashes.SHA256())
    )
    key = ed25519.Ed25519PrivateKey.generate() if alg == "ed25519" else ec.generate_private_key(ec.SECP256R1())
    signer = (
        x509.CertificateBuilder()
        .subject_name(_name(f"{service} content credentials{' (development)' if development else ''}", service))
        .issuer_name(root_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=825))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(True, False, False, False, False, False, False, False, False), critical=True
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.EMAIL_PROTECTION]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(root_key.public_key()), critical=False
        )
        .sign(root_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    chain = signer.public_bytes(pem) + root.public_bytes(pem)
    key_pem = key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return chain, key_pem, root.public_bytes(pem)


def dev_chain_dir() -> Path:
    return Path(settings.DATA_DIR) / "c2pa"


def ensure_dev_chain() -> tuple[SigningChain, bool]:
    """The development chain in DATA_DIR/c2pa, generated on first use. Returns (chain, created)."""
    directory = dev_chain_dir()
    cert_path, key_path, root_path = directory / "chain.pem", directory / "signer.key", directory / "root.pem"
    created = False
    if not (cert_path.exists() and key_path.exists() and root_path.exists()):
        directory.mkdir(parents=True, exist_ok=True)
        chain, key_pem, root_pem = generate_chain(service=settings.SERVICE_NAME)
        # Write the key last, atomically: a concurrent process sees all three files or generates anew.
        for path, content in ((cert_path, chain), (root_path, root_pem), (key_path, key_pem)):
            tmp = path.with_suffix(path.suffix + ".tmp")
            tmp.write_bytes(content)
            tmp.chmod(0o600)
            tmp.replace(path)
        created = True
        logger.warning(
            "Generated a development C2PA signing chain in %s: results are signed by a certificate "
            "nobody outside this installation trusts. Set VISAGE_C2PA_CERT/VISAGE_C2PA_KEY for production.",
            directory,
        )
    key_pem = key_path.read_bytes()
    return (
        SigningChain(
            cert_pem=cert_path.read_bytes(),
            key_pem=key_pem,
            alg=algorithm_for(key_pem),
            trust_anchors_pem=root_path.read_bytes() + _extra_anchors(),
            development=True,
        ),
        created,
    )


def _extra_anchors() -> bytes:
    extra = settings.C2PA_TRUST_ANCHORS.strip()
    return ("\n" + extra + "\n").encode() if extra else b""


def configured_chain() -> SigningChain | None:
    """The chain from settings, the development chain, or None when provenance is disabled."""
    if not settings.PROVENANCE_ENABLED or "c2pa" not in settings.AIGC_LABELS:
        return None
    if settings.C2PA_CERT and settings.C2PA_KEY:
        cert_pem, key_pem = settings.C2PA_CERT.encode(), settings.C2PA_KEY.encode()
        certs = x509.load_pem_x509_certificates(cert_pem)
        root = certs[-1].public_bytes(serialization.Encoding.PEM)
        return SigningChain(cert_pem, key_pem, algorithm_for(key_pem), root + _extra_anchors())
    return ensure_dev_chain()[0]


# --- signing ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResultClaim:
    """What a result's manifest says about it."""

    content_id: str  # the job id: the implicit label's content id
    title: str  # the result's file name
    inputs_sha256: str  # over the inputs' SHA-256s, in upload order; never the inputs
    target_sha256: str
    target_media_type: str
    engine: dict = field(default_factory=dict)  # {"name", "version", "swapper", "enhancer", ...}

    def manifest(self, media_type: str) -> dict:
        service = settings.SERVICE_NAME
        agent = {"name": service, "version": self.engine.get("version", "")}
        return {
            "claim_generator_info": [{"name": service, "version": self.engine.get("version", "")}],
            "title": self.title,
            "format": media_type,
            "assertions": [
                {
                    "label": "c2pa.actions",
                    "data": {
                        "actions": [
                            {"action": "c2pa.created", "digitalSourceType": IPTC_SOURCE_TYPE,
                             "softwareAgent": agent},
                            {
                                "action": "c2pa.edited",
                                "digitalSourceType": IPTC_SOURCE_TYPE,
                                "softwareAgent": agent,
                                "description": "Face swapped into the target by a trained model",
                                "parameters": {"ingredientIds": ["target"]},
                            },
                        ]
                    },
                },
                {
                    "label": ASSERTION_LABEL,
                    "data": {
                        "label": LABEL,
                        "provider": service,
                        "content_id": self.content_id,
                        "inputs_sha256": self.inputs_sha256,
                        "engine": self.engine,
                    },
                },
            ],
            "ingredients": [
                {
                    "title": "target",
                    "format": self.target_media_type,
                    "relationship": "componentOf",
                    "instance_id": "target",
                    "label": "target",
                    "description": f"target sha256:{self.target_sha256}",
                }
            ],
        }


def inputs_digest(sha256s: list[str]) -> str:
    return hashlib.sha256("\n".join(sha256s).encode()).hexdigest()


class _Signing:
    """The process's signer and reader context, built once (lazily, like the other integration clients)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple | None = None
        self.chain: SigningChain | None = None
        self.signer = None
        self.context = None

    def get(self) -> _Signing | None:
        chain = configured_chain()
        if chain is None:
            return None
        key = (chain.cert_pem, chain.key_pem, chain.trust_anchors_pem)
        with self._lock:
            if key != self._key:
                self.signer = c2pa.Signer.from_info(
                    c2pa.C2paSignerInfo(chain.alg.encode(), chain.cert_pem, chain.key_pem, _tsa_url())
                )
                self.context = reader_context(chain.trust_anchors_pem)
                self.chain, self._key = chain, key
        return self


def _tsa_url() -> bytes | None:
    return settings.C2PA_TSA_URL.encode() if settings.C2PA_TSA_URL else None


def reader_context(trust_anchors_pem: bytes) -> c2pa.Context:
    return c2pa.Context.from_dict(
        {
            # No claim thumbnail: it would grow every file, and an ingredient's would copy an input.
            "builder": {"thumbnail": {"enabled": False}},
            "trust": {"user_anchors": trust_anchors_pem.decode()},
            "verify": {"verify_trust": True},
        }
    )


_signing = _Signing()


def sign(data: bytes, *, media_type: str, claim: ResultClaim) -> bytes:
    """The result with its manifest embedded. Raises ProvenanceError; returns `data` when disabled."""
    signing = _signing.get()
    if signing is None:
        return data
    if media_type not in SIGNABLE_TYPES:
        raise ProvenanceError(f"cannot sign {media_type}")
    try:
        with c2pa.Builder(claim.manifest(media_type), context=signing.context) as builder:
            out = io.BytesIO()
            builder.sign(signing.signer, media_type, io.BytesIO(data), out)
    except c2pa.C2paError as exc:
        raise ProvenanceError(f"C2PA signing failed: {exc}") from exc
    return out.getvalue()


def sign_file(path: Path, *, media_type: str, claim: ResultClaim) -> Path:
    """Sign a (large) file on disk into `<name>.signed<suffix>` beside it, streaming; returns that path."""
    signing = _signing.get()
    if signing is None:
        return path
    signed = path.with_name(path.stem + ".signed" + path.suffix)
    try:
        with (
            c2pa.Builder(claim.manifest(media_type), context=signing.context) as builder,
            path.open("rb") as source,
            signed.open("w+b") as dest,
        ):
            builder.sign(signing.signer, media_type, source, dest)
    except c2pa.C2paError as exc:
        signed.unlink(missing_ok=True)
        raise ProvenanceError(f"C2PA signing failed: {exc}") from exc
    return signed


# --- reading ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProvenanceReport:
    manifest_present: bool
    validation_state: str = ""  # Trusted / Valid / Invalid ("" without a manifest)
    signer: str = ""
    issuer: str = ""
    alg: str = ""
    signed_at: str = ""
    failures: list = field(default_factory=list)  # validation failure codes
    assertions: dict = field(default_factory=dict)  # label → data of the active manifest
    ingredients: list = field(default_factory=list)
    manifest: dict = field(default_factory=dict)  # the active manifest as c2pa reports it

    def summary(self) -> dict:
        """What the job object shows."""
        return {
            "manifest_present": self.manifest_present,
            "validation_state": self.validation_state,
            "signer": self.signer,
            "issuer": self.issuer,
            "alg": self.alg,
            "failures": self.failures,
            "content_id": self.assertions.get(ASSERTION_LABEL, {}).get("content_id", ""),
        }


def read(data: bytes | Path, *, media_type: str, trust_anchors_pem: bytes | None = None) -> ProvenanceReport:
    """Read and validate the manifest of a file (bytes or a path). Trusts our chain's root unless
    other anchors are given."""
    if trust_anchors_pem is None:
        signing = _signing.get()
        trust_anchors_pem = signing.chain.trust_anchors_pem if signing else _extra_anchors()
    context = reader_context(trust_anchors_pem) if trust_anchors_pem.strip() else None
    try:
        stream = data.open("rb") if isinstance(data, Path) else io.BytesIO(data)
        with stream, c2pa.Reader(media_type, stream, context=context) as reader:
            store = json.loads(reader.json())
            state = reader.get_validation_state() or ""
    except c2pa.C2paError as exc:
        if "ManifestNotFound" in type(exc).__name__ or "JUMBF" in str(exc):
            return ProvenanceReport(manifest_present=False)
        return ProvenanceReport(manifest_present=True, validation_state=STATE_INVALID, failures=[str(exc)])
    active = store.get("manifests", {}).get(store.get("active_manifest", ""), {})
    results = store.get("validation_results", {}).get("activeManifest", {})
    failures = [item.get("code", "") for item in results.get("failure", [])]
    signature = active.get("signature_info", {})
    return ProvenanceReport(
        manifest_present=bool(active),
        validation_state=state,
        signer=signature.get("common_name", ""),
        issuer=signature.get("issuer", ""),
        alg=signature.get("alg", ""),
        signed_at=signature.get("time", ""),
        failures=failures,
        assertions={a.get("label", ""): a.get("data", {}) for a in active.get("assertions", [])},
        ingredients=active.get("ingredients", []),
        manifest=active,
    )
