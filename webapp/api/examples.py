"""Response examples for the OpenAPI document, one per operation's success and one problem per
documented error status (added by webapp.api.schema.add_examples). tests/webapp/api/test_schema_gates.py
validates every example against its response schema, so they cannot drift from what the API sends."""

from __future__ import annotations

JOB_ID = "3f6c1e0a-8a4f-4c55-9a51-2d1b8f0e7c11"
BASE = "https://visage.example"

JOB = {
    "id": JOB_ID,
    "state": "succeeded",
    "terminal": True,
    "progress": 100,
    "queue": None,
    "warming_up": None,
    "favourite": False,
    "created_at": "2025-05-01T10:00:00.120000Z",
    "queued_at": "2025-05-01T10:00:01.480000Z",
    "started_at": "2025-05-01T10:00:02.010000Z",
    "completed_at": "2025-05-01T10:00:04.730000Z",
    "options": {
        "mode": "standard",
        "resolution": "720p",
        "faces": "one",
        "face_index": None,
        "reference_face_index": None,
        "face_sources": None,
        "webhook_url": None,
    },
    "source": {"media_type": "image/png", "width": 512, "height": 512, "photos": 1},
    "target": {
        "media_type": "image/jpeg",
        "kind": "image",
        "width": 460,
        "height": 430,
        "frames": 1,
        "fps": None,
        "duration_seconds": None,
        "has_audio": False,
        "name": "beach.jpg",
    },
    "result_url": f"{BASE}/results/1/{JOB_ID}.jpg?X-Amz-Signature=…",
    "result": {
        "url": f"{BASE}/results/1/{JOB_ID}.jpg?X-Amz-Signature=…",
        "inline_url": f"{BASE}/results/1/{JOB_ID}.jpg?inline",
        "before_url": f"{BASE}/results/1/{JOB_ID}.before.jpg",
        "thumbnail_url": f"{BASE}/results/1/{JOB_ID}.thumb.webp",
        "expires_at": "2025-05-01T11:00:04Z",
        "media_type": "image/jpeg",
        "bytes": 48213,
        "width": 460,
        "height": 430,
        "deleted": False,
        "ai_generated": True,
    },
    "error": None,
    "moderation": {"state": "passed", "message": None},
    "metrics": {
        "queue_seconds": 0.53,
        "gpu_seconds": 0.41,
        "wall_seconds": 2.7,
        "stage_ms": {"detect": 38.2, "swap": 221.5, "total": 812.0},
        "attempts": 1,
    },
    "engine": {"swapper": "inswapper_128", "enhancer": "gfpgan", "faces_swapped": 1, "mode_ran": "standard"},
    "provenance": {
        "manifest_present": True,
        "validation_state": "Trusted",
        "signer": "Visage",
        "issuer": "Visage",
        "alg": "es256",
        "failures": [],
        "content_id": JOB_ID,
    },
    "consent": {"given_at": "2025-05-01T10:00:00.120000Z", "version": "2025-01", "channel": "api"},
    "quote": {"amount": "0.50", "currency": "USD", "mode": "standard", "resolution": "720p", "frames": 1},
    "cost": {
        "state": "paid",
        "sentence": "Paid 0.50 credits (the price shown was 0.50).",
        "currency": "USD",
        "unit": "credits",
        "minor_unit_exponent": 2,
        "quoted": "0.50",
        "quoted_minor": 50,
        "price": "0.50",
        "held": "0.00",
        "paid": "0.50",
        "paid_minor": 50,
        "charge": "0.50",
        "released": "0.00",
        "refunded": None,
        "refunded_minor": None,
        "capped": False,
        "mode_charged": "standard",
        "mode_requested": "standard",
        "frames": 1,
        "resolution_coefficient": "1.00",
        "mode_weight": "1.00",
        "gpu_seconds": "0.4100",
        "gpu_seconds_estimate": "0.450",
        "gpu_seconds_per_frame": "0.410000",
        "formula_amount": "0.50",
        "wall_seconds": "2.7000",
        "unit_price": "0.010000",
    },
    "credits": "Paid 0.50 credits (the price shown was 0.50).",
    "media_deleted": False,
    "share": None,
    "urls": {
        "self": f"{BASE}/api/v1/jobs/{JOB_ID}",
        "cancel": f"{BASE}/api/v1/jobs/{JOB_ID}/cancel",
        "share": f"{BASE}/api/v1/jobs/{JOB_ID}/share",
        "page": f"{BASE}/jobs/{JOB_ID}/",
    },
}

QUEUED_JOB = {
    **JOB,
    "state": "queued",
    "terminal": False,
    "progress": 0,
    "queue": {"position": 2, "start_seconds": 12, "eta_seconds": 20},
    "started_at": None,
    "completed_at": None,
    "result_url": None,
    "result": None,
    "metrics": {
        "queue_seconds": None,
        "gpu_seconds": None,
        "wall_seconds": None,
        "stage_ms": None,
        "attempts": 0,
    },
    "engine": None,
    "provenance": None,
    "cost": {
        **JOB["cost"],
        "state": "reserved",
        "held": "0.50",
        "paid": None,
        "paid_minor": None,
        "charge": None,
    },
}

SHARE_LINK = {"url": f"{BASE}/s/AbC123xyz", "expires_at": "2025-05-08T10:00:00Z"}

QUOTE = {
    "frames": 1,
    "kind": "image",
    "processed_width": 460,
    "processed_height": 430,
    "mode": "standard",
    "mode_requested": "standard",
    "resolution": "720p",
    "resolution_coefficient": "1.00",
    "mode_weight": "1.00",
    "gpu_seconds_per_frame_estimate": "0.450000",
    "gpu_seconds_estimate": "0.450",
    "unit_price": "0.010000",
    "minimum_charge": "0.50",
    "amount": "0.50",
    "amount_minor": 50,
    "hold_amount": "0.50",
    "currency": "USD",
    "queue": "default",
    "available": "499.50",
    "sufficient": True,
    "target": {"width": 460, "height": 430, "frames": 1, "kind": "image"},
    "links": {"top_up": f"{BASE}/account/credits/"},
}

LEDGER_PAGE = {
    "count": 1,
    "next": None,
    "previous": None,
    "results": [
        {
            "id": 7,
            "kind": "capture",
            "amount": "0.5000",
            "job_id": JOB_ID,
            "reason": "",
            "created_at": "2025-05-01T10:00:04.730000Z",
        }
    ],
}

UPLOAD_ID = "b7e2d4a0-5c1f-4e8b-9d36-0a4f2c8e1b57"
UPLOAD_URLS = {
    "self": f"{BASE}/api/v1/uploads/{UPLOAD_ID}",
    "complete": f"{BASE}/api/v1/uploads/{UPLOAD_ID}/complete",
}
PENDING_UPLOAD = {
    "id": UPLOAD_ID,
    "state": "pending",
    "kind": "video",
    "size_bytes": 12582912,
    "part_size_bytes": 8388608,
    "parts": [
        {
            "part_number": n,
            "size_bytes": size,
            "url": f"https://s3.visage.example/uploads/{UPLOAD_ID}?partNumber={n}&uploadId=2~x&X-Amz-Signature=…",
        }
        for n, size in ((1, 8388608), (2, 4194304))
    ],
    "parts_received": [],
    "media": {},
    "expires_at": "2025-05-02T10:00:00Z",
    "urls": UPLOAD_URLS,
}
READY_UPLOAD = {
    **PENDING_UPLOAD,
    "state": "ready",
    "parts": [],
    "media": {"media_type": "video/mp4", "width": 1280, "height": 720, "frames": 240, "fps": 24.0},
}
DEVICE = {
    "id": 3,
    "name": "Alice's phone",
    "client": "mobile",
    "created_at": "2025-05-01T09:58:00Z",
    "last_used_at": "2025-05-01T10:00:00Z",
}
TOKEN_PAIR = {
    "access_token": "vat_Qm9v…",
    "refresh_token": "vrt_c2Vj…",
    "token_type": "Bearer",
    "expires_in": 900,
    "refresh_expires_in": 2592000,
    "device": DEVICE,
}

PUSH_DEVICE = {
    "id": 12,
    "platform": "apns",
    "app_id": "com.example.visage",
    "name": "Ana's iPhone",
    "locale": "pt-BR",
    "push_enabled": True,
    "created_at": "2025-05-01T09:58:00Z",
    "updated_at": "2025-05-01T09:58:00Z",
}

SUCCESS = {
    "auth_token_create": {"token": "vsg_9f2c…", "name": "API token", "prefix": "vsg_9f2c"},
    "me_retrieve": {
        "username": "alice",
        "email": "alice@example.com",
        "balance": "500.00",
        "held": "0.50",
        "available": "499.50",
        "currency": "USD",
        "plan": "Default",
    },
    "jobs_create": QUEUED_JOB,
    "jobs_list": {"count": 1, "next": None, "previous": None, "results": [JOB]},
    "jobs_retrieve": JOB,
    "jobs_partial_update": {**JOB, "favourite": True},
    "jobs_cancel": {
        **QUEUED_JOB,
        "state": "canceled",
        "terminal": True,
        "queue": None,
        "cost": {**QUEUED_JOB["cost"], "state": "released", "held": "0.00", "released": "0.50"},
    },
    "jobs_share_create": SHARE_LINK,
    "jobs_events": {
        "id": JOB_ID,
        "state": "running",
        "progress": 40,
        "deleted": False,
        "version": 5,
        "terminal": False,
        "updated_at": "2025-05-01T10:00:03Z",
        "url": f"{BASE}/api/v1/jobs/{JOB_ID}",
    },
    "faces_detect": {
        "width": 460,
        "height": 430,
        "min_face_px": 40,
        "faces": [{"index": 0, "box": [181.0, 88.5, 290.2, 214.0], "score": 0.998}],
    },
    "quotes_create": QUOTE,
    "ledger_list": LEDGER_PAGE,
    "ledger_export_csv": f"id,created_at,kind,amount,job_id,reason\r\n7,2025-05-01T10:00:04Z,capture,0.5000,{JOB_ID},\r\n",
    "billing_packs": {
        "payments_enabled": True,
        "providers": ["stripe"],
        "packs": [
            {
                "id": 1,
                "name": "Starter",
                "credits": "100.00",
                "price": "9.99",
                "price_minor": 999,
                "currency": "USD",
            }
        ],
    },
    "billing_checkout_create": {
        "id": "cs_test_a1b2c3",
        "provider": "stripe",
        "url": "https://checkout.stripe.com/c/pay/cs_test_a1b2c3",
        "code_url": "",
        "order_string": "",
    },
    "uploads_create": PENDING_UPLOAD,
    "uploads_retrieve": {
        **PENDING_UPLOAD,
        "parts_received": [
            {"part_number": 1, "size_bytes": 8388608, "etag": '"9b2cf535f27731c974343645a3985328"'}
        ],
    },
    "uploads_complete": READY_UPLOAD,
    "auth_refresh": TOKEN_PAIR,
    "auth_devices_list": [
        {**DEVICE, "current": True},
        {**DEVICE, "id": 4, "name": "Firefox", "client": "web", "last_used_at": None, "current": False},
    ],
    "push_devices_register": PUSH_DEVICE,
    "push_devices_list": [
        PUSH_DEVICE,
        {**PUSH_DEVICE, "id": 13, "platform": "fcm", "name": "Pixel", "locale": "", "push_enabled": False},
    ],
}

# The code a client most likely meets for each error status, with its usual detail.
PROBLEMS = {
    "400": (
        "validation_error",
        'mode: "turbo" is not a valid choice.',
        {"mode": ['"turbo" is not a valid choice.']},
    ),
    "401": ("not_authenticated", "Authentication credentials were not provided.", None),
    "402": ("insufficient_credits", "This swap costs 0.50 credits and you have 0.10 available.", None),
    "403": ("share_links_disabled", "Share links are turned off on this server.", None),
    "404": ("not_found", "Not found.", None),
    "406": ("not_acceptable", "Could not satisfy the request Accept header.", None),
    "409": ("job_not_cancelable", "The job already finished.", None),
    "413": ("request_too_large", "The request body is too large.", None),
    "415": ("unsupported_media_type_header", 'Unsupported media type "application/json" in request.', None),
    "422": ("consent_required", "Confirm that you may use the faces in the photos you upload.", None),
    "429": ("throttled", "Request was throttled. Expected available in 30 seconds.", None),
    "502": ("payment_provider_error", "The payment provider failed; nothing was charged.", None),
    "503": (
        "service_unavailable",
        "A service this request needs is briefly unavailable; please retry shortly.",
        None,
    ),
}


# Where an operation's own refusal for a status is not the usual one.
OPERATION_PROBLEMS = {
    ("uploads_retrieve", "404"): ("upload_not_found", "No upload with this id.", None),
    ("jobs_create", "403"): ("account_closed", "This account was deleted; nothing was stored or charged.", None),
    ("jobs_create", "404"): ("upload_not_found", "No upload with this id.", None),
    ("jobs_create", "409"): ("upload_not_ready", "The upload is not complete yet: send its parts, then complete it.", None),
    ("uploads_complete", "404"): ("upload_not_found", "No upload with this id.", None),
    ("uploads_complete", "409"): (
        "upload_incomplete",
        "Parts still missing: 2. Send them, then complete.",
        None,
    ),
    ("uploads_complete", "422"): (
        "checksum_mismatch",
        "The stored file's SHA-256 is not the one declared: upload it again.",
        None,
    ),
    ("push_devices_register", "400"): (
        "validation_error",
        'platform: "gcm" is not a valid choice.',
        {"platform": ['"gcm" is not a valid choice.']},
    ),
    ("push_devices_delete", "404"): ("not_found", "No push device with this id.", None),
    ("auth_refresh", "401"): (
        "refresh_token_reused",
        "This refresh token was already used, so someone else may hold it: the device is signed out. Sign in again.",
        None,
    ),
}


def problem_for(operation_id: str, status: str) -> tuple[str, str, dict | None] | None:
    return OPERATION_PROBLEMS.get((operation_id, status)) or PROBLEMS.get(status)


def problem_example(status: str, title: str, path: str, operation_id: str = "") -> dict:
    code, detail, errors = problem_for(operation_id, status)
    body = {
        "type": f"{BASE}/errors/{code.replace('_', '-')}",
        "title": title,
        "status": int(status),
        "detail": detail,
        "code": code,
        "instance": path.replace("{job_id}", JOB_ID)
        .replace("{upload_id}", UPLOAD_ID)
        .replace("{device_id}", "3"),
        "request_id": "5d0c1f6e2b9a4c7e8f1a2b3c4d5e6f70",
    }
    if errors:
        body["errors"] = errors
    if code == "insufficient_credits":
        body.update(
            required="0.50",
            available="0.10",
            currency="USD",
            required_minor=50,
            links={"top_up": f"{BASE}/account/credits/"},
        )
    return body
