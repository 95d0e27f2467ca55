"""Visage settings: read once, only from environment variables.

Defaults give the embedded single-machine setup (SQLite, a bundled Redis server, a bundled S3
server); production (VISAGE_PRODUCTION=1) refuses to start without its required values.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from decimal import Decimal
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from webapp.env import (
    env_bool,
    env_float,
    env_int,
    env_json,
    env_list,
    env_str,
    refuse_example_secrets,
    webhook_secret_bytes,
    webhook_secrets,
)

BASE_DIR = Path(__file__).resolve().parent.parent


PRODUCTION = env_bool("VISAGE_PRODUCTION", False)
DATA_DIR = Path(env_str("VISAGE_DATA_DIR", str(BASE_DIR / "var")))


def _secret_key() -> str:
    key = env_str("SECRET_KEY", "")
    if key:
        return key
    if PRODUCTION:
        raise ImproperlyConfigured("SECRET_KEY (or SECRET_KEY_FILE) is required when VISAGE_PRODUCTION=1")
    key_file = DATA_DIR / "secret_key"
    if not key_file.exists():
        key_file.parent.mkdir(parents=True, exist_ok=True)
        key_file.write_text(secrets.token_urlsafe(50))
        key_file.chmod(0o600)
    return key_file.read_text().strip()


SECRET_KEY = _secret_key()
# Off unless asked for (DEBUG=1): debug pages list every route and setting. WhiteNoise
# still serves static files in development (WHITENOISE_USE_FINDERS below).
DEBUG = env_bool("DEBUG", False)
if PRODUCTION and DEBUG:
    raise ImproperlyConfigured("DEBUG must be off when VISAGE_PRODUCTION=1 (its error pages show settings and code)")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["*"] if not PRODUCTION else [])
if PRODUCTION and not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS is required when VISAGE_PRODUCTION=1")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "webapp.apps.VisageAdminConfig",  # django.contrib.admin under the site's name
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_rq",
    "webapp",
    "webapp.ops",
    "moderation",
    "billing",
]

MIDDLEWARE = [
    "webapp.ops.http_metrics.HttpMetricsMiddleware",  # first: times everything below it
    "django.middleware.security.SecurityMiddleware",
    "webapp.ops.static_files.StaticFilesMiddleware",  # WhiteNoise's, async-capable
    "webapp.ops.request_id.RequestIdMiddleware",
    "webapp.api.middleware.ProblemJsonMiddleware",  # /api/ errors as problem+json, also Django's own
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The language of each request: the switcher's cookie, else Accept-Language, else LANGUAGE_CODE;
    # answers say which in Content-Language (docs/concepts/languages.md).
    "django.middleware.locale.LocaleMiddleware",
    "webapp.api.nul_bytes.RefuseNulMiddleware",  # a NUL in a query or form: 400 (PostgreSQL refuses it)
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "webapp.ops.security_headers.ContentSecurityPolicyMiddleware",
]

ROOT_URLCONF = "webapp.urls"
WSGI_APPLICATION = "webapp.wsgi.application"
ASGI_APPLICATION = "webapp.asgi.application"  # what the web server runs (docs/operations/serving.md)

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{DATA_DIR / 'visage.sqlite3'}"),
        # Every process keeps its connection (per thread) for up to 60 s and checks it before reuse:
        # a database restart or failover costs one reconnect, never a request's 500.
        conn_max_age=60,
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Workers and the web server share one SQLite file: WAL lets readers run beside the writer,
    # IMMEDIATE transactions take the write lock up front (a deferred one that later writes fails
    # at once with "database is locked" instead of waiting), and the timeout waits for the lock.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        timeout=30,
        transaction_mode="IMMEDIATE",
        init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    )
# PostgreSQL through a pooler in transaction mode (PgBouncer; docs/operations/scaling.md): one
# connection's consecutive transactions may reach different server connections, so no server-side
# cursors (a ledger export's .iterator() would lose its cursor between fetches), as Django requires.
DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = env_bool("DATABASE_TRANSACTION_POOLING", False)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {
        "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
        "OPTIONS": {"min_length": env_int("VISAGE_PASSWORD_MIN_LENGTH", 8)},
    },
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# --- App tokens (webapp/accounts/devices.py): short-lived access, rotating refresh ---------------
ACCESS_TOKEN_TTL_S = env_int("VISAGE_ACCESS_TOKEN_TTL_S", 15 * 60)
REFRESH_TOKEN_TTL_S = env_int("VISAGE_REFRESH_TOKEN_TTL_S", 30 * 24 * 3600)

# --- Sign-in limits (webapp/accounts/login_limits.py) -------------------------------------------
# Reverse proxies in front of the web server that append to X-Forwarded-For (0: ignore the header,
# the socket's address is the client). The API throttles (DRF NUM_PROXIES) and the login limits agree.
TRUSTED_PROXIES = env_int("VISAGE_TRUSTED_PROXIES", 0)
# Failed sign-ins (API token, site, admin) allowed per username and per client address within a
# window that starts at the first failure; then refused until the window ends.
LOGIN_MAX_FAILURES_PER_USERNAME = env_int("VISAGE_LOGIN_MAX_FAILURES_PER_USERNAME", 10)
LOGIN_MAX_FAILURES_PER_IP = env_int("VISAGE_LOGIN_MAX_FAILURES_PER_IP", 50)
LOGIN_FAILURE_WINDOW_S = env_int("VISAGE_LOGIN_FAILURE_WINDOW_S", 900)
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard"
LOGOUT_REDIRECT_URL = "login"

# English unless the request asks for another language the site speaks (Accept-Language, or the
# site's switcher, remembered in the django_language cookie). zh-CN, zh-SG and zh fall back to zh-hans.
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
LANGUAGE_COOKIE_SAMESITE = "Lax"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise warns on every request without it
# Without collectstatic (development), WhiteNoise serves straight from the apps' static folders.
WHITENOISE_USE_FINDERS = not PRODUCTION
WHITENOISE_AUTOREFRESH = DEBUG
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if PRODUCTION
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

# Cookies: never readable by scripts (the site's JS takes the CSRF token from a <meta> tag), not sent
# on cross-site sub-requests; HTTPS-only in production.
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
if PRODUCTION:
    SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", True)
    CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    # Usually the TLS proxy redirects and sets HSTS; these are for deployments without one. Once the
    # site says it is HTTPS-only (a redirect, or cookies that are only sent over TLS), browsers are
    # told so too (a year, Django's recommended value), unless the operator sets another figure.
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
    SECURE_HSTS_SECONDS = env_int(
        "SECURE_HSTS_SECONDS", 31_536_000 if SECURE_SSL_REDIRECT or SESSION_COOKIE_SECURE else 0
    )
    SILENCED_SYSTEM_CHECKS = env_list("SILENCED_SYSTEM_CHECKS", ["security.W004", "security.W008"])

# --- Redis and queues -------------------------------------------------------------------------
REDIS_URL = env_str("REDIS_URL", "redis://127.0.0.1:6390/0")
MODERATION_QUEUE = "moderation"
# `visage_run`'s moderation worker processes (each loads the moderation models once): screening is
# CPU-bound and the GPU step waits for it, so half the cores by default (at least one).
MODERATION_WORKERS = env_int("VISAGE_MODERATION_WORKERS", max(1, (os.cpu_count() or 2) // 2))
GPU_QUEUES = ["vip", "default", "batch"]  # a GPU worker listens in this order
# `visage_run`'s GPU-queue worker processes; 0: one where onnxruntime has a GPU, else at least two
# (visage_run.gpu_worker_count says why).
GPU_WORKERS = env_int("VISAGE_GPU_WORKERS", 0)
WEBHOOK_QUEUE = "webhooks"  # the outbox queue: job webhooks and push notifications
JOB_TIMEOUT_S = env_int("VISAGE_JOB_TIMEOUT_S", 600)
RQ_QUEUES = {
    name: {"URL": REDIS_URL, "DEFAULT_TIMEOUT": JOB_TIMEOUT_S}
    for name in [MODERATION_QUEUE, *GPU_QUEUES, WEBHOOK_QUEUE]
}
RQ_SHOW_ADMIN_LINK = True
# A job whose worker stopped sending heartbeats for this long is requeued (or failed when its
# attempts are spent) by the sweeper: RQ alone notices a dead worker only much later.
JOB_HEARTBEAT_TIMEOUT_S = env_int("VISAGE_JOB_HEARTBEAT_TIMEOUT_S", 60)
JOB_MAX_ATTEMPTS = env_int("VISAGE_JOB_MAX_ATTEMPTS", 3)
# A job committed as `created` or `queued` whose RQ task is still missing after this long (Redis
# was down when it was enqueued) is enqueued again by the sweeper.
ENQUEUE_GRACE_S = env_int("VISAGE_ENQUEUE_GRACE_S", 30)
WORKER_MAX_JOBS = env_int("VISAGE_WORKER_MAX_JOBS", 500)
# SIGTERM (a scale-down, a rollout): a worker finishes its running job for at most this long, then
# requeues it and exits; keep it below the pod's terminationGracePeriodSeconds (deploy/k8s).
WORKER_DRAIN_TIMEOUT_S = env_int("VISAGE_WORKER_DRAIN_TIMEOUT_S", 240)
# Chaos testing only: keep each GPU run in `running` this long so a test can kill its worker.
FAULT_PAUSE_S = env_float("VISAGE_FAULT_PAUSE_S", 0.0)

# Status without polling: GET /api/v1/jobs/events (SSE) ends after this long (the
# client reconnects with Last-Event-ID, so a stream never pins a server thread for good) and sends
# a keep-alive comment this often; GET /api/v1/jobs/{id}?wait=N waits at most this long.
EVENTS_STREAM_MAX_S = env_float("VISAGE_EVENTS_STREAM_MAX_S", 300.0)
EVENTS_KEEPALIVE_S = env_float("VISAGE_EVENTS_KEEPALIVE_S", 15.0)
LONG_POLL_MAX_S = 30
# Long-polls and event streams one user may hold open at once (webapp.api.wait_slots); one more is a 429.
WAITS_PER_USER = env_int("VISAGE_WAITS_PER_USER", 20)
# Long-polls and event streams one web process holds open at once: each holds one Redis connection
# (its XREAD BLOCK), so this bounds a web process's Redis connections; one more answers at once, with
# the job as it is (the client polls again). Size it with Redis's maxclients (docs/operations/scaling.md).
WAITS_PER_PROCESS = env_int("VISAGE_WAITS_PER_PROCESS", 5000)
# Requests running Django's sync code at once per web server process (webapp.serving).
WEB_THREADS = env_int("WEB_THREADS", 32)

# --- S3 storage -------------------------------------------------------------------------------
S3_ENDPOINT = env_str("S3_ENDPOINT", "127.0.0.1:8333")
S3_ACCESS_KEY = env_str("S3_ACCESS_KEY", "visage-dev")
S3_SECRET_KEY = env_str("S3_SECRET_KEY", "visage-dev-secret")
S3_SECURE = env_bool("S3_SECURE", False)
S3_REGION = env_str("S3_REGION", "us-east-1")
S3_UPLOADS_BUCKET = env_str("S3_UPLOADS_BUCKET", "visage-uploads")
S3_RESULTS_BUCKET = env_str("S3_RESULTS_BUCKET", "visage-results")
S3_PRESIGN_EXPIRY_S = env_int("S3_PRESIGN_EXPIRY_S", 3600)
# Where clients (browsers, API users) fetch presigned URLs from, when that is not S3_ENDPOINT: in
# compose the app reaches minio:9000, a name only its network resolves, while clients use the
# published port (http://localhost:9000) or a public name (https://files.example.com). The host
# is part of the signature, so URLs are signed for this address. Empty: S3_ENDPOINT.
S3_PUBLIC_URL = env_str("S3_PUBLIC_URL", "").rstrip("/")
if S3_PUBLIC_URL and not re.fullmatch(r"https?://[^/?#]+", S3_PUBLIC_URL):
    raise ImproperlyConfigured(f"S3_PUBLIC_URL must be http(s)://host[:port], not {S3_PUBLIC_URL!r}")
# The site's public address (https://visage.example.com): the links in a job that is sent without a
# request to take the address from (webhook bodies). Empty: those links are paths (/api/v1/jobs/…).
PUBLIC_URL = env_str("VISAGE_PUBLIC_URL", "").rstrip("/")
if PUBLIC_URL and not re.fullmatch(r"https?://[^/?#]+", PUBLIC_URL):
    raise ImproperlyConfigured(f"VISAGE_PUBLIC_URL must be http(s)://host[:port], not {PUBLIC_URL!r}")
S3_CONNECT_TIMEOUT_S = env_float("S3_CONNECT_TIMEOUT_S", 3.0)
# Between bytes, not for a whole upload. A request S3 accepted but never answers (a frozen server) is
# not retried (webapp/media/storage.py), so this bounds a submit against a frozen S3.
S3_READ_TIMEOUT_S = env_float("S3_READ_TIMEOUT_S", 5.0)
# Uploaded originals with no job row (the submit failed after the object landed) are deleted this
# long after they were stored, by the workers' sweeper every UPLOAD_SWEEP_INTERVAL_S.
UPLOAD_ORPHAN_GRACE_S = env_int("VISAGE_UPLOAD_ORPHAN_GRACE_S", 3600)
UPLOAD_SWEEP_INTERVAL_S = env_int("VISAGE_UPLOAD_SWEEP_INTERVAL_S", 900)
S3_RETRIES = env_int("S3_RETRIES", 1)
RESULT_RETENTION_DAYS = env_int("VISAGE_RESULT_RETENTION_DAYS", 7)
# Share links: an unlisted public page per result. Off unless a deployment opts in;
# turning it off again makes every existing link answer 404.
# On by default: a link is made only by the owner, per result, and is unlisted, noindex, expiring and
# revocable, showing the marked and labelled result only (docs/api/gallery.md says why).
SHARE_LINKS_ENABLED = env_bool("VISAGE_SHARE_LINKS_ENABLED", True)
SHARE_LINK_TTL_DAYS = env_int("VISAGE_SHARE_LINK_TTL_DAYS", 7)
SHARE_PRESIGN_EXPIRY_S = 600  # the public page's result URLs: short, the page makes fresh ones
if PRODUCTION and (S3_ACCESS_KEY == "visage-dev" or S3_SECRET_KEY == "visage-dev-secret"):
    raise ImproperlyConfigured("S3_ACCESS_KEY and S3_SECRET_KEY are required when VISAGE_PRODUCTION=1")

# --- Uploads ------------------------------------------------------------------------------------
MAX_UPLOAD_BYTES = env_int("VISAGE_MAX_UPLOAD_BYTES", 20 * 1024 * 1024)
MAX_IMAGE_PIXELS = env_int("VISAGE_MAX_IMAGE_PIXELS", 40_000_000)
MIN_IMAGE_SIDE = env_int("VISAGE_MIN_IMAGE_SIDE", 64)
MAX_SOURCE_PHOTOS = env_int("VISAGE_MAX_SOURCE_PHOTOS", 5)  # photos of the same face per job
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_UPLOAD_BYTES * 2 + 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
# Direct uploads (POST /api/v1/uploads): parts sent straight to S3 (5 MiB is S3's smallest part),
# and how long an unfinished or unused one is kept before the sweep aborts and deletes it.
DIRECT_UPLOAD_PART_BYTES = max(5 * 1024 * 1024, env_int("VISAGE_DIRECT_UPLOAD_PART_BYTES", 8 * 1024 * 1024))
DIRECT_UPLOAD_EXPIRY_S = env_int("VISAGE_DIRECT_UPLOAD_EXPIRY_S", 24 * 3600)

# --- Video ---------------------------------------------------------------------------------
VIDEO_ENABLED = env_bool("VISAGE_VIDEO_ENABLED", True)  # video targets (MP4/MOV/WebM)
# A video must also fit MAX_UPLOAD_BYTES, which is checked first.
VIDEO_MAX_BYTES = env_int("VISAGE_VIDEO_MAX_BYTES", MAX_UPLOAD_BYTES)
VIDEO_MAX_DURATION_S = env_float("VISAGE_VIDEO_MAX_DURATION_S", 60.0)
VIDEO_MAX_FRAMES = env_int("VISAGE_VIDEO_MAX_FRAMES", 3600)
# A clip is cut into one segment per GPU worker alive on its queue (each its own RQ job), none
# shorter than VIDEO_SEGMENT_SECONDS (not worth a worker's start) nor longer than
# VIDEO_SEGMENT_MAX_SECONDS (what a retry redoes; JOB_TIMEOUT_S must allow one).
VIDEO_SEGMENT_SECONDS = env_float("VISAGE_VIDEO_SEGMENT_SECONDS", 10.0)
VIDEO_SEGMENT_MAX_SECONDS = env_float("VISAGE_VIDEO_SEGMENT_MAX_SECONDS", 60.0)
# Detect faces every N frames (and on scene cuts / lost tracks) and track with landmarks between.
VIDEO_TRACKING = env_bool("VISAGE_VIDEO_TRACKING", True)
VIDEO_DETECT_INTERVAL = env_int("VISAGE_VIDEO_DETECT_INTERVAL", 10)
# libx264 CRF per mode (lower = better and bigger).
VIDEO_CRF = {
    "fast": env_int("VISAGE_VIDEO_CRF_FAST", 23),
    "standard": env_int("VISAGE_VIDEO_CRF_STANDARD", 20),
    "hq": env_int("VISAGE_VIDEO_CRF_HQ", 16),
}

# --- Accounts ---------------------------------------------------------------------------------
SIGNUP_CREDITS = Decimal(env_str("VISAGE_SIGNUP_CREDITS", "20"))  # starting balance for site sign-ups
# The site's anonymous forms, per client address (webapp/site/limits.py); a reset also per email address.
SITE_THROTTLE_RATES = {
    "signup": env_str("VISAGE_THROTTLE_SIGNUP", "5/hour"),
    "password_reset": env_str("VISAGE_THROTTLE_PASSWORD_RESET", "5/hour"),
    "report": env_str("VISAGE_THROTTLE_REPORT", "10/hour"),
}

# --- Billing -------------------------------------------------------------------------
# Quotes fit a speed model (billing.calibration) to the last N measured jobs and warm-up runs of a
# mode and media kind, and add this percentile of their spread around it, so the operator's margin
# holds while quotes stay near what jobs really cost.
BILLING_QUOTE_PERCENTILE = env_int("VISAGE_QUOTE_PERCENTILE", 90)
BILLING_QUOTE_SAMPLE_WINDOW = env_int("VISAGE_QUOTE_SAMPLE_WINDOW", 200)
# ... at least this factor above the model: the spread that a fresh install's few warm-up samples
# cannot show yet (measured here: a photo's GPU time varies ±30 % run to run).
BILLING_QUOTE_MIN_MARGIN = env_str("VISAGE_QUOTE_MIN_MARGIN", "1.2")
# What one GPU second costs the operator: the admin's margin column and monthly report use it.
BILLING_GPU_COST_PER_SECOND = Decimal(env_str("VISAGE_GPU_COST_PER_SECOND", "0.0005"))
# GPU workers measure their own speed per mode after start, while no job waits (a few real swaps
# and clips of several sizes and lengths).
WARMUP_CALIBRATION = env_bool("VISAGE_WARMUP_CALIBRATION", True)
# Stripe Checkout for buying credit packs. Without a secret key the packs page says card payments
# are not configured (staff top up by hand in the admin).
STRIPE_SECRET_KEY = env_str("STRIPE_SECRET_KEY", "")
STRIPE_WEBHOOK_SECRET = env_str("STRIPE_WEBHOOK_SECRET", "")
STRIPE_API_BASE = env_str("STRIPE_API_BASE", "https://api.stripe.com")
STRIPE_TIMEOUT_S = env_float("STRIPE_TIMEOUT_S", 10.0)
# Alipay and WeChat Pay (CNY packs), each on once all its values are set (docs/concepts/billing.md).
# Keys are PEM text; every one may be given as NAME_FILE.
ALIPAY_APP_ID = env_str("ALIPAY_APP_ID", "")
ALIPAY_PRIVATE_KEY = env_str("ALIPAY_PRIVATE_KEY", "")  # the app's RSA2 private key
ALIPAY_PUBLIC_KEY = env_str("ALIPAY_PUBLIC_KEY", "")  # Alipay's public key (支付宝公钥)
ALIPAY_GATEWAY = env_str("ALIPAY_GATEWAY", "https://openapi.alipay.com/gateway.do")
WECHATPAY_MCH_ID = env_str("WECHATPAY_MCH_ID", "")
WECHATPAY_APP_ID = env_str("WECHATPAY_APP_ID", "")
WECHATPAY_MCH_SERIAL_NO = env_str("WECHATPAY_MCH_SERIAL_NO", "")  # the merchant API certificate's serial
WECHATPAY_PRIVATE_KEY = env_str("WECHATPAY_PRIVATE_KEY", "")  # apiclient_key.pem
WECHATPAY_APIV3_KEY = env_str("WECHATPAY_APIV3_KEY", "")  # 32 characters
WECHATPAY_PLATFORM_CERT = env_str("WECHATPAY_PLATFORM_CERT", "")  # the platform certificate (PEM)
WECHATPAY_API_BASE = env_str("WECHATPAY_API_BASE", "https://api.mch.weixin.qq.com")
WECHATPAY_TIMEOUT_S = env_float("WECHATPAY_TIMEOUT_S", 10.0)
PAYMENT_NOTIFICATION_MAX_AGE_S = env_int("VISAGE_PAYMENT_NOTIFICATION_MAX_AGE_S", 300)

# --- Email ------------------------------------------------------------------------------------
# SMTP when EMAIL_HOST is set; otherwise messages (password resets) are printed to the web server's
# log. Production without EMAIL_HOST still starts, with a warning (webapp.apps.WebappConfig.ready).
EMAIL_HOST = env_str("EMAIL_HOST", "")
EMAIL_PORT = env_int("EMAIL_PORT", 587)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 10)  # seconds: a stuck SMTP server must not hang a request
EMAIL_BACKEND = (
    "django.core.mail.backends.smtp.EmailBackend"
    if EMAIL_HOST
    else "django.core.mail.backends.console.EmailBackend"
)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "Visage <no-reply@localhost>")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
PASSWORD_RESET_TIMEOUT = env_int("PASSWORD_RESET_TIMEOUT", 24 * 60 * 60)  # reset links expire after a day

# --- Moderation (read by moderation/conf.py) ------------------------------------------------------
VISAGE_NSFW_MODEL = env_str("VISAGE_NSFW_MODEL", "")  # empty: the 320n.onnx shipped in the nudenet wheel
VISAGE_NSFW_THRESHOLDS = env_json("VISAGE_NSFW_THRESHOLDS", {})  # {class: [review, reject]} over the defaults
VISAGE_CLIP_MODEL = env_str("VISAGE_CLIP_MODEL", "ViT-B-32")
VISAGE_CLIP_CHECKPOINT = env_str("VISAGE_CLIP_CHECKPOINT", "")  # local file; empty = CLIP check disabled
VISAGE_CLIP_CONFIG = env_str("VISAGE_CLIP_CONFIG", "")
VISAGE_CLIP_PROMPTS = env_json("VISAGE_CLIP_PROMPTS", None)  # None: moderation.conf.CLIP_DEFAULTS
VISAGE_OCR_ENABLED = env_bool("VISAGE_OCR_ENABLED", True)
VISAGE_OCR_MAX_SIDE = env_int("VISAGE_OCR_MAX_SIDE", 480)
VISAGE_OCR_ON_SOURCE = env_bool("VISAGE_OCR_ON_SOURCE", False)
VISAGE_OCR_MIN_SCORE = env_float("VISAGE_OCR_MIN_SCORE", 0.5)
VISAGE_IDENTITY_MAX_DISTANCE = env_float("VISAGE_IDENTITY_MAX_DISTANCE", 0.55)
VISAGE_IDENTITY_MAX_COSINE_DISTANCE = env_float("VISAGE_IDENTITY_MAX_COSINE_DISTANCE", 0.6)
VISAGE_MIN_FACE_PX = env_int("VISAGE_MIN_FACE_PX", 40)
VISAGE_PHASH_MAX_DISTANCE = env_int("VISAGE_PHASH_MAX_DISTANCE", 6)
VISAGE_MODERATION_THREADS = env_int("VISAGE_MODERATION_THREADS", 0)

# --- Engine -----------------------------------------------------------------------------------
VISAGE_MODELS_DIR = Path(env_str("VISAGE_MODELS_DIR", str(DATA_DIR / "models")))
# "local": onnxruntime inside each GPU worker. "triton": the models run in Triton Inference Server
# (`python -m swap serve`) with dynamic batching across jobs; workers are its clients (swap.inference.triton_client).
VISAGE_INFERENCE = env_str("VISAGE_INFERENCE", "local").strip().lower()
if VISAGE_INFERENCE not in ("local", "triton"):
    raise ImproperlyConfigured(f"VISAGE_INFERENCE must be 'local' or 'triton', not {VISAGE_INFERENCE!r}")
VISAGE_TRITON_URL = env_str("VISAGE_TRITON_URL", "grpc://127.0.0.1:8001")  # or http://host:8000
# Share of jobs (stable hash of the job id) that run canary model versions (python -m swap models canary).
VISAGE_CANARY_PERCENT = env_float("VISAGE_CANARY_PERCENT", 0.0)
if not 0.0 <= VISAGE_CANARY_PERCENT <= 100.0:
    raise ImproperlyConfigured(
        f"VISAGE_CANARY_PERCENT must be between 0 and 100, not {VISAGE_CANARY_PERCENT}"
    )

# --- Webhooks ---------------------------------------------------------------------------------
# Deliveries to private/loopback addresses are refused in production (SSRF); allow for development.
WEBHOOK_ALLOW_PRIVATE = env_bool("VISAGE_WEBHOOK_ALLOW_PRIVATE", not PRODUCTION)
WEBHOOK_SECRET = env_str("VISAGE_WEBHOOK_SECRET", "")
webhook_secrets(WEBHOOK_SECRET)  # checked at start-up; webapp.jobs.webhooks signs with them

# --- Push notifications (webapp/notifications/): each platform is off until its credentials are set ---
# Firebase Cloud Messaging HTTP v1: the service account's JSON key (VISAGE_FCM_SERVICE_ACCOUNT_FILE: its path).
FCM_SERVICE_ACCOUNT = env_json("VISAGE_FCM_SERVICE_ACCOUNT", {})
if FCM_SERVICE_ACCOUNT and not {"project_id", "client_email", "private_key", "token_uri"} <= set(FCM_SERVICE_ACCOUNT):
    raise ImproperlyConfigured(
        "VISAGE_FCM_SERVICE_ACCOUNT must be a service account's JSON key "
        "(project_id, client_email, private_key, token_uri)"
    )
FCM_URL = env_str("VISAGE_FCM_URL", "https://fcm.googleapis.com")
# APNs token-based auth: the .p8 key (VISAGE_APNS_KEY_FILE: its path), its key id, the team id, and the
# bundle ids (apns-topic) of the apps this server pushes to.
APNS_KEY = env_str("VISAGE_APNS_KEY", "")
APNS_KEY_ID = env_str("VISAGE_APNS_KEY_ID", "")
APNS_TEAM_ID = env_str("VISAGE_APNS_TEAM_ID", "")
APNS_TOPIC = env_list("VISAGE_APNS_TOPIC", [])
APNS_USE_SANDBOX = env_bool("VISAGE_APNS_USE_SANDBOX", False)  # development builds get sandbox tokens
APNS_URL = env_str("VISAGE_APNS_URL", "")  # empty: Apple's production or sandbox host
if APNS_KEY and not (APNS_KEY_ID and APNS_TEAM_ID and APNS_TOPIC):
    raise ImproperlyConfigured(
        "VISAGE_APNS_KEY needs VISAGE_APNS_KEY_ID, VISAGE_APNS_TEAM_ID and VISAGE_APNS_TOPIC"
    )

# --- Provenance, visible mark and consent -------------------------------------------------
SERVICE_NAME = env_str("VISAGE_SERVICE_NAME", "Visage")  # the provider named in every result's credentials
# C2PA Content Credentials: a PEM chain (signer first) and its key; ES256/ES384/PS256 or Ed25519.
# Unset outside production: a development chain is generated into DATA_DIR/c2pa on first use.
PROVENANCE_ENABLED = env_bool("VISAGE_PROVENANCE_ENABLED", True)
# Which AI-content label standards results carry (webapp/media/aigc.py): `iptc` (EXIF/XMP/PNG-text/MP4
# tags with the IPTC digital source type), `c2pa` (Content Credentials), `gb45438` (China's GB 45438-2025:
# the AIGC metadata field and a CJK visible mark at least 5 % of the shorter side).
AIGC_LABELS = env_list("VISAGE_AIGC_LABELS", ["iptc", "c2pa"])
if not AIGC_LABELS or set(AIGC_LABELS) - {"iptc", "c2pa", "gb45438"}:
    raise ImproperlyConfigured(
        f"VISAGE_AIGC_LABELS must list one or more of iptc, c2pa, gb45438, not {','.join(AIGC_LABELS)!r}"
    )
AIGC_PRODUCER = env_str("VISAGE_AIGC_PRODUCER", SERVICE_NAME)  # GB 45438 ContentProducer: name or code
AIGC_PROPAGATOR = env_str("VISAGE_AIGC_PROPAGATOR", "")  # GB 45438 ContentPropagator; empty: left to the app
C2PA_CERT = env_str("VISAGE_C2PA_CERT", "")
C2PA_KEY = env_str("VISAGE_C2PA_KEY", "")
C2PA_TRUST_ANCHORS = env_str("VISAGE_C2PA_TRUST_ANCHORS", "")  # extra PEM roots readers here trust
C2PA_TSA_URL = env_str("VISAGE_C2PA_TSA_URL", "")  # RFC 3161 time-stamp authority; empty: none
if PRODUCTION and PROVENANCE_ENABLED and "c2pa" in AIGC_LABELS and not (C2PA_CERT and C2PA_KEY):
    raise ImproperlyConfigured(
        "VISAGE_C2PA_CERT and VISAGE_C2PA_KEY (or their _FILE variants) are required when VISAGE_PRODUCTION=1; "
        "set VISAGE_PROVENANCE_ENABLED=0 to ship results without Content Credentials"
    )
# The visible "AI-generated" badge burnt into downloads and video frames (off only on purpose: logged).
MARK_ENABLED = env_bool("VISAGE_MARK_ENABLED", True)
MARK_TEXT = env_str("VISAGE_MARK_TEXT", "")  # empty: "AI-generated", or "AI生成" with gb45438
MARK_POSITION = env_str("VISAGE_MARK_POSITION", "bottom-right")
MARK_HEIGHT_FRACTION = env_float("VISAGE_MARK_HEIGHT_FRACTION", 0.10)  # of the shorter side
# What an uploader confirms about the faces they upload; the version is stored with every job.
# The default wording is in the translation catalogue (webapp/jobs/services/intake.py), so it is shown in
# the request's language; an operator's own is shown as written.
CONSENT_TEXT = env_str(
    "VISAGE_CONSENT_TEXT",
    "I have the right to use the face(s) in the photos I upload: they are mine, or the people shown "
    "have agreed to this face swap.",
)
CONSENT_VERSION = env_str("VISAGE_CONSENT_VERSION", "") or hashlib.sha256(CONSENT_TEXT.encode()).hexdigest()[:12]

# --- API --------------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "webapp.api.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "webapp.api.problems.problem_exception_handler",
    "DEFAULT_PARSER_CLASSES": [
        "webapp.api.parsers.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 20,
    # Every view is throttled; views with their own budgets replace these.
    "DEFAULT_THROTTLE_CLASSES": ["webapp.api.throttles.ReadThrottle", "webapp.api.throttles.ScopedThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "job_create": env_str("VISAGE_THROTTLE_CREATE", "30/min"),
        "read": env_str("VISAGE_THROTTLE_READ", "600/min"),
        "auth": env_str("VISAGE_THROTTLE_AUTH", "20/min"),
        "faces": env_str("VISAGE_THROTTLE_FACES", "60/min"),
        "export": env_str("VISAGE_THROTTLE_EXPORT", "10/min"),
    },
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    "NUM_PROXIES": TRUSTED_PROXIES,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Visage API",
    "DESCRIPTION": (
        "Moderated, metered face-swap jobs. Errors are RFC 9457 application/problem+json. Human text "
        "(a problem's `title` and `detail`) follows Accept-Language (English, Simplified Chinese); every "
        "answer names its language in Content-Language."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": r"/api/v[0-9]+",  # tags from the first segment after it: jobs, auth, me, …
    # One name per closed set of values, the same in every generated client.
    "ENUM_NAME_OVERRIDES": {
        "JobStateEnum": "webapp.jobs.choices.JobState",
        "ModeEnum": "billing.choices.Mode",
        "ResolutionEnum": "billing.choices.Resolution",
        "MediaKindEnum": "billing.choices.MediaKind",
        "LedgerEntryKindEnum": "billing.choices.EntryKind",
        "PushPlatformEnum": "webapp.notifications.models.PushPlatform",
        "CostStateEnum": ["reserved", "paid", "released", "refunded"],
        "ModerationStateEnum": ["pending", "in_review", "rejected", "passed", "not_screened"],
    },
    "COMPONENT_SPLIT_REQUEST": True,
    # Every operation documents the problem+json errors it can answer (429, 401, 503, 400/413, 404),
    # takes Accept-Language and answers with Content-Language.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "webapp.api.schema.add_problem_responses",
        "webapp.api.schema.close_objects",
        "webapp.api.schema.add_examples",
        "webapp.api.schema.add_language_headers",  # Accept-Language in, Content-Language out
    ],
    # Swagger UI and ReDoc from our own static files (drf-spectacular-sidecar), never a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

CACHES = {
    "default": {
        "BACKEND": "webapp.ops.cache.FailOpenRedisCache",
        "LOCATION": REDIS_URL,
        # Fail fast when Redis is down: a request must not wait out the OS's TCP timeouts.
        "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
    }
}

# --- Observability ---------------------------------------------------------------------
# When set, /metrics answers only `Authorization: Bearer <VISAGE_METRICS_KEY>`.
METRICS_KEY = env_str("VISAGE_METRICS_KEY", "")
# Workers' own /metrics port (visage_worker --metrics-port overrides; 0 = none).
WORKER_METRICS_PORT = env_int("VISAGE_WORKER_METRICS_PORT", 0)
GPU_SAMPLE_INTERVAL_S = env_float("VISAGE_GPU_SAMPLE_INTERVAL_S", 5.0)
# OpenTelemetry traces of requests, RQ tasks and job stages: "otlp" (OTEL_EXPORTER_OTLP_* variables),
# "console", or empty (off). Needs the `tracing` extra.
TRACING = env_str("VISAGE_TRACING", "")
# json: one JSON object per line with request_id, job_id, queue, attempt, stage; plain: for a terminal.
LOG_FORMAT = env_str("VISAGE_LOG_FORMAT", "json")
if LOG_FORMAT not in ("json", "plain"):
    raise ImproperlyConfigured(f"VISAGE_LOG_FORMAT must be json or plain, not {LOG_FORMAT!r}")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"context": {"()": "webapp.telemetry.logs.ContextFilter"}},
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s %(context)s"},
        "json": {"()": "webapp.telemetry.logs.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["context"] if LOG_FORMAT == "plain" else [],
        }
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}

# --- Production refusals -------------------------------------------------------------------------
if PRODUCTION and not METRICS_KEY:
    raise ImproperlyConfigured(
        "VISAGE_METRICS_KEY (or VISAGE_METRICS_KEY_FILE) is required when VISAGE_PRODUCTION=1: without it "
        "/metrics shows anyone the jobs, users' activity and the ledger's totals"
    )
if PRODUCTION:
    refuse_example_secrets({
        "SECRET_KEY": SECRET_KEY,
        "DATABASE_URL": str(DATABASES["default"].get("PASSWORD") or ""),
        "S3_SECRET_KEY": S3_SECRET_KEY,
        "VISAGE_WEBHOOK_SECRET": " ".join(webhook_secret_bytes(s).decode("latin-1") for s in webhook_secrets(WEBHOOK_SECRET)),
        "VISAGE_METRICS_KEY": METRICS_KEY,
    })
