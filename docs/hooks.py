"""MkDocs hook: the API reference page's ReDoc bundle, copied from drf-spectacular-sidecar.

The bundle is the one the running server's /api/redoc/ uses (a project dependency), so the site
renders docs/openapi.yaml with no CDN and no vendored copy in git.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import drf_spectacular_sidecar

BUNDLE = Path(drf_spectacular_sidecar.__file__).parent / "static/drf_spectacular_sidecar/redoc/bundles"


def on_post_build(config, **kwargs):
    assets = Path(config["site_dir"]) / "assets"
    assets.mkdir(parents=True, exist_ok=True)
    for name in ("redoc.standalone.js", "redoc.standalone.js.LICENSE.txt"):
        shutil.copyfile(BUNDLE / name, assets / name)
