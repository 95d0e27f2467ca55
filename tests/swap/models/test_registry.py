"""The manifest says which models "auto" prefers for each stage, best first (registry.auto_order)."""

from __future__ import annotations

import json

from swap.models import registry


def test_every_model_auto_prefers_is_a_manifest_model_of_that_kind():
    assert set(registry.AUTO_ORDER) == {
        "detector", "landmarker", "recognizer", "swapper", "occluder", "parser", "enhancer"
    }  # fmt: skip
    for kind, names in registry.AUTO_ORDER.items():
        assert names and all(registry.MODELS[name].kind == kind for name in names)
    assert registry.auto_order("swapper")[0] == "inswapper_128"
    assert registry.auto_order("converter") == ()  # ghost's converter is loaded with ghost, never alone


def test_another_manifest_brings_its_own_order_or_keeps_the_packaged_one(tmp_path, monkeypatch):
    own = tmp_path / "own.json"
    own.write_text(json.dumps({"auto": {"enhancer": ["codeformer"]}, "models": []}))
    monkeypatch.setenv(registry.MANIFEST_ENV, str(own))
    assert registry.auto_order("enhancer") == ("codeformer",)
    assert registry.auto_order("swapper") == ()

    older = tmp_path / "older.json"
    older.write_text(json.dumps({"models": []}))
    monkeypatch.setenv(registry.MANIFEST_ENV, str(older))
    assert registry.auto_order("enhancer") == ("gfpgan_1.4", "codeformer")
