"""The zh-Hans catalogues are complete and current: every entry translated and none fuzzy, every
word the code and templates mark for translation in them (a fresh `visage_makemessages` changes
nothing but its date), and the committed .mo files compiled from the committed .po files.

Needs GNU gettext's tools (xgettext, msgmerge, msgfmt, msgattrib: Debian's `gettext` package), as
makemessages itself does; CI installs them (.ci/run).
"""

from __future__ import annotations

import gettext
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from django.core.management import call_command

ROOT = Path(__file__).resolve().parents[1]
LOCALE = ROOT / "locale"
LANGUAGES = ["zh_Hans"]
DOMAINS = ["django", "djangojs"]
TOOLS = ["xgettext", "msgmerge", "msgfmt", "msgattrib"]


@pytest.fixture(scope="module", autouse=True)
def gettext_tools():
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        message = f"the catalogue checks need GNU gettext ({', '.join(missing)}): apt-get install gettext"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


def catalogues() -> list[Path]:
    return [LOCALE / language / "LC_MESSAGES" / f"{domain}.po" for language in LANGUAGES for domain in DOMAINS]


def entries(po: Path, *flags: str) -> str:
    """The entries msgattrib selects (`--untranslated`, `--only-fuzzy`), without the header."""
    found = subprocess.run(["msgattrib", "--no-wrap", *flags, str(po)], capture_output=True, text=True, check=True)
    return "\n".join(line for line in found.stdout.split("\n\n") if not line.startswith('msgid ""'))


@pytest.mark.parametrize("po", catalogues(), ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_every_entry_is_translated_and_none_is_fuzzy(po):
    assert po.is_file(), f"{po} is missing: run `python manage.py visage_makemessages`"
    assert entries(po, "--untranslated") == "", f"untranslated in {po.name}"
    assert entries(po, "--only-fuzzy") == "", f"fuzzy (a guess by msgmerge: check and unmark) in {po.name}"
    # Placeholders kept (python-format, javascript-format) and the plural header right.
    subprocess.run(["msgfmt", "--check", "-o", os.devnull, str(po)], check=True, capture_output=True)


def _without_date(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith('"POT-Creation-Date:'))


def test_every_marked_word_is_in_the_catalogue(tmp_path, monkeypatch, settings):
    """visage_makemessages into a copy of locale/: the result must equal the committed catalogue. A
    new or changed {% translate %}, gettext() or JS gettext() shows up as an added (untranslated or
    fuzzy) entry, a deleted one as a missing entry."""
    copy = tmp_path / "locale"
    shutil.copytree(LOCALE, copy)
    settings.LOCALE_PATHS = [copy]
    monkeypatch.chdir(ROOT)
    call_command("visage_makemessages", locale=LANGUAGES, no_compile=True, verbosity=0)
    for po in catalogues():
        fresh = copy / po.relative_to(LOCALE)
        if _without_date(fresh.read_text()) != _without_date(po.read_text()):
            import difflib

            diff = "\n".join(difflib.unified_diff(
                po.read_text().splitlines(), fresh.read_text().splitlines(), "committed", "from the code", lineterm="",
            ))
            pytest.fail(f"{po.name} is not what the code marks: run `python manage.py visage_makemessages`, "
                        f"translate what it added, and commit both files\n{diff[:6000]}")


@pytest.mark.parametrize("po", catalogues(), ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_the_committed_mo_is_compiled_from_the_committed_po(po, tmp_path):
    mo = po.with_suffix(".mo")
    assert mo.is_file(), f"{mo} is missing: run `python manage.py visage_makemessages`"
    compiled = tmp_path / "fresh.mo"
    subprocess.run(["msgfmt", "--check-format", "-o", str(compiled), str(po)], check=True)
    with mo.open("rb") as committed, compiled.open("rb") as fresh:
        assert gettext.GNUTranslations(committed)._catalog == gettext.GNUTranslations(fresh)._catalog, (
            f"{mo.name} is older than {po.name}: run `python manage.py visage_makemessages`"
        )


def test_chinese_is_served_from_the_catalogue():
    from django.utils import translation

    with translation.override("zh-hans"):
        assert translation.gettext("New swap") == "新建换脸"
        assert translation.gettext("Log in") == "登录"  # ours, not only Django's own
    with translation.override("en"):
        assert translation.gettext("New swap") == "New swap"


def test_the_default_consent_statement_is_the_one_in_the_catalogue():
    from django.conf import settings
    from django.utils import translation

    from webapp.jobs.services import intake

    assert intake.DEFAULT_CONSENT_TEXT == settings.CONSENT_TEXT  # tests run with the default
    with translation.override("zh-hans"):
        assert intake.consent_wording().startswith("我有权使用所上传照片中的人脸")
