"""A Chinese-speaking user on a phone (390×844, the browser asking for zh-CN): sign up, upload the
astronaut pair, see the price, be told about consent, submit, watch the swap finish and find it
in the gallery, every step in Simplified Chinese; then the footer's switcher changes the language
and the choice is remembered (a cookie) over the browser's own."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.webapp.conftest import drain
from webapp.jobs.models import Job

pytestmark = pytest.mark.django_db(transaction=True)

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "locale": "zh-CN"}
LATIN_SENTENCE = re.compile(r"\b[A-Za-z]+ [a-z]+ [a-z]+ [a-z]+\b")  # four English words in a row


def assert_chinese_page(page) -> None:
    """The page says it is zh-hans and its visible words are Chinese: no English sentence left over."""
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    text = page.locator("main").inner_text() + page.locator("header").inner_text()
    assert re.search(r"[\u4e00-\u9fff]", text), text
    leftover = LATIN_SENTENCE.findall(text)
    assert not leftover, leftover


def test_the_whole_upload_flow_in_simplified_chinese_on_a_phone(new_page, live_server, astronaut_files, artifacts):
    page = new_page(**PHONE)
    source_path, target_path = astronaut_files

    page.goto(f"{live_server.url}/signup/")
    assert_chinese_page(page)
    expect(page.get_by_role("heading", name="创建你的账户")).to_be_visible()
    page.get_by_label("用户名").fill("lin")
    page.get_by_label("邮箱").fill("lin@example.com")
    page.get_by_label("密码", exact=True).fill("a-long-pass-phrase-1")
    page.get_by_label("密码确认").fill("a-long-pass-phrase-1")
    page.get_by_role("button", name="注册").click()
    page.wait_for_url(f"{live_server.url}/jobs/new/")
    expect(page.get_by_role("status").first).to_contain_text("免费积分")
    expect(page.get_by_role("heading", name="新建换脸")).to_be_visible()
    assert_chinese_page(page)

    # The upload page's script speaks Chinese too (its catalogue: /i18n/catalog.js).
    page.locator("#id_source").set_input_files(source_path)
    page.locator("#id_target").set_input_files(target_path)
    expect(page.get_by_alt_text("要使用的人脸：所选文件预览")).to_be_visible()
    face = page.get_by_role("button", name="替换第 1 张脸（最大的）")
    expect(face).to_be_visible()
    expect(page.locator("#quote-amount")).to_have_text(re.compile(r"^\d+\.\d\d 积分$"))
    expect(page.locator("#quote-note")).to_have_text(re.compile("这是你最多支付的金额"))
    face.click()
    expect(page.locator("#face_index")).to_have_value("0")
    page.get_by_role("radio", name="快速").check()
    page.get_by_role("button", name="开始换脸").click()
    expect(page.locator("#consent-error")).to_contain_text("每次换脸都需要确认你有权使用所上传的人脸")
    assert not Job.objects.exists()
    consent = page.locator("#consent")
    expect(page.locator("label.consent-choice")).to_contain_text("我有权使用所上传照片中的人脸")
    consent.check()
    page.screenshot(path=artifacts / "zh-01-upload-ready.png", full_page=True)
    page.get_by_role("button", name="开始换脸").click()
    page.wait_for_url(re.compile(r"/jobs/[0-9a-f-]{36}/$"))
    job = Job.objects.get()
    assert (job.mode, job.face_index, job.consent_channel) == ("fast", 0, "site")
    assert job.consent_text.startswith("我有权使用")  # the wording the user saw is what consent records
    expect(page.locator("#job-status")).to_have_text(re.compile("[\u4e00-\u9fff]"))
    assert_chinese_page(page)

    drain()
    expect(page.get_by_alt_text("换脸后的照片（AI 生成）")).to_be_visible(timeout=30_000)
    expect(page.locator("#state-badge")).to_have_text("已完成")
    expect(page.get_by_role("link", name="下载")).to_be_visible()
    assert_chinese_page(page)
    page.screenshot(path=artifacts / "zh-02-result.png", full_page=True)

    page.get_by_role("link", name="我的换脸", exact=True).click()
    card = page.locator(f"#job-{job.id}")
    expect(card).to_have_attribute("data-state", "succeeded")
    expect(card.get_by_text("已支付", exact=True)).to_be_visible()
    expect(card.get_by_role("link", name="快速换脸")).to_be_visible()
    assert_chinese_page(page)


def test_the_switcher_changes_the_language_and_remembers_it(new_page, live_server, user_a):
    page = new_page(**PHONE)  # the browser asks for Chinese first
    page.goto(f"{live_server.url}/login/")
    expect(page.get_by_role("heading", name="欢迎回来")).to_be_visible()

    page.get_by_role("button", name="English").click()
    expect(page.get_by_role("heading", name="Welcome back")).to_be_visible()
    expect(page.locator("html")).to_have_attribute("lang", "en")
    assert page.url == f"{live_server.url}/login/"  # back where the switch was pressed
    cookie = {c["name"]: c["value"] for c in page.context.cookies()}["django_language"]
    assert cookie == "en"
    # Remembered over Accept-Language, on every page, signed in or not.
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill("alice-pass-123")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="No swaps yet")).to_be_visible()

    page.get_by_role("button", name="简体中文").click()
    expect(page.get_by_role("heading", name="还没有换脸")).to_be_visible()
    expect(page.get_by_role("button", name="简体中文")).to_have_attribute("aria-current", "true")
    page.goto(f"{live_server.url}/account/")
    expect(page.get_by_role("heading", name="账户", exact=True)).to_be_visible()
