"""The look-inside page with several vaults (issue 46, point 5), in Debian's Chromium as
test_page_in_browser.py drives it: a service of two small vaults of their own (keyword only), the same path
in both with different text. The picker, each item's vault, the same path opened from each vault, the choice
kept in the address across reload and back, status per vault, and the notice of a vault gone."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import two_vaults
from tests.api.test_page_in_browser import CHROMIUM, browser, expect, opened, search

__all__ = ["browser"]  # the module's Chromium, shared with these tests

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed: `apt-get install chromium` (make test does it when run as root)",
)

# "Inbox.md" in both vaults, with different words; each vault's other note links to its own Inbox
WORK = {
    "Inbox.md": "# Inbox\n\nThe zorblat budget review with the finance team.\n",
    "Projects/Apollo.md": "# Apollo\n\nThe zorblat launch plan. See [[Inbox]].\n",
}
PERSONAL = {
    "Inbox.md": "# Inbox\n\nBuy zorblat seeds and water the tomatoes.\n",
    "Garden.md": "# Garden\n\nzorblat tomatoes and basil. Back to [[Inbox]].\n",
}


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with two_vaults.serving(tmp_path_factory.mktemp("two-vaults"), notes=(WORK, PERSONAL)) as base:
        yield base


@pytest.fixture
def page(browser: Any, two: str) -> Iterator[Any]:
    with opened(browser, two) as seen:
        expect(seen.page.locator("#vault-picker")).to_be_visible()  # once /index/status listed the vaults
        yield seen.page


def _marks(page: Any) -> set[str]:
    return set(page.locator("#results .result .vault-mark").all_inner_texts())


def _pick(page: Any, vault: str, on: bool) -> None:
    box = page.get_by_label(vault, exact=True)
    with page.expect_response(lambda r: r.url.endswith("/search")) as answer:
        box.check() if on else box.uncheck()
    assert answer.value.ok, answer.value.text()
    assert (answer.value.request.post_data_json.get("vaults") is None) == on


def test_the_picker_limits_the_results_and_the_address_keeps_it(page: Any) -> None:
    expect(page.locator("#vault-choices input")).to_have_count(2)
    search(page, "zorblat", mode="keyword")
    expect(page.locator("#results .result")).to_have_count(4)
    assert _marks(page) == {"work", "personal"}
    asked_all = page.url
    _pick(page, "work", on=False)
    expect(page).to_have_url(re.compile(r"[?&]vaults=personal(&|$)"))
    expect(page.locator("#results .result")).to_have_count(2)
    assert _marks(page) == {"personal"}
    page.reload()  # the address says which vaults: the picker and the search follow it
    expect(page.get_by_label("work", exact=True)).not_to_be_checked()
    expect(page.get_by_label("personal", exact=True)).to_be_checked()
    expect(page.locator("#results .result")).to_have_count(2)
    assert _marks(page) == {"personal"}
    page.go_back()  # every vault again, as that search was asked
    expect(page).to_have_url(asked_all)
    expect(page.get_by_label("work", exact=True)).to_be_checked()
    expect(page.locator("#results .result")).to_have_count(4)
    # the last vault picked cannot be unticked: asking none would ask nothing
    _pick(page, "personal", on=False)
    page.get_by_label("work", exact=True).click()
    expect(page.get_by_label("work", exact=True)).to_be_checked()


def test_the_same_path_opens_from_each_vault_with_its_own_text_and_links(page: Any) -> None:
    search(page, "zorblat", mode="keyword")
    uris: dict[str, str] = {}
    for vault, words in (("work", "finance team"), ("personal", "tomatoes")):
        hit = page.locator("#results .result").filter(has=page.locator(".vault-mark", has_text=vault))
        hit = hit.filter(has=page.locator(".path", has_text="Inbox.md"))
        hit.locator("h3 button").click()
        expect(page).to_have_url(re.compile(rf"#/note/Inbox\.md\?vault={vault}&lines="))
        expect(page.locator("#note-meta .vault-mark")).to_have_text(vault)
        expect(page.locator("#note-rendered")).to_contain_text(words)
        obsidian = page.locator("#note-obsidian a").get_attribute("href")
        assert obsidian.startswith("obsidian://open?vault=")  # as the API gives it: each vault's own
        uris[vault] = obsidian
        page.reload()  # the note's address names its vault
        expect(page.locator("#note-rendered")).to_contain_text(words)
        page.click("#note-close")
    assert uris["work"] != uris["personal"]
    # a note's links stay in its vault: Garden (personal) links to personal's Inbox
    page.locator("#results .result h3 button", has_text="Garden").click()
    link = page.locator("#note-rendered a.wikilink", has_text="Inbox")
    assert "vault=personal" in link.get_attribute("href")
    link.click()
    expect(page.locator("#note-rendered")).to_contain_text("tomatoes")
    page.locator("#note-links button", has_text="Garden").click()  # a backlink, in personal too
    expect(page.locator("#note-rendered")).to_contain_text("basil")


def test_why_not_a_note_of_the_other_vault_explains_and_opens_it_from_its_vault(page: Any) -> None:
    search(page, "zorblat budget review finance team", mode="keyword")  # work's Inbox is surest
    page.fill("#why-not", "Garden")
    with page.expect_response(lambda r: r.url.endswith("/search")) as answer:
        page.press("#why-not", "Enter")
    why = answer.value.json()["explain"]["why_not"]
    assert (why["vault"], why["note_path"], why["indexed"]) == ("personal", "Garden.md", True)
    box = page.locator("#why-not-answer")
    expect(box.locator(".verdict")).to_have_text(why["reason"])
    box.locator("h3 button").click()
    expect(page).to_have_url(re.compile(r"#/note/Garden\.md\?vault=personal"))
    expect(page.locator("#note-rendered")).to_contain_text("basil")


def test_a_note_opened_before_the_vaults_are_listed_is_read_from_its_vault(browser: Any, two: str) -> None:
    context = browser.new_context()
    page = context.new_page()
    held: list[Any] = []  # /index/status kept unanswered: the page does not know yet there are two vaults
    page.route(re.compile(r"/index/status"), lambda route: held.append(route))
    try:
        page.goto(f"{two}/")
        search(page, "zorblat", mode="keyword")
        hit = page.locator("#results .result").filter(has_text="tomatoes")
        hit.filter(has=page.locator(".path", has_text="Inbox.md")).locator("h3 button").click()
        expect(page).to_have_url(re.compile(r"#/note/Inbox\.md\?vault=personal"))
        expect(page.locator("#note-rendered")).to_contain_text("tomatoes")
        assert held  # the page did ask
    finally:
        for route in held:
            route.continue_()
        context.close()


def test_the_recall_preview_asks_the_vaults_picked_and_marks_each_entry(page: Any) -> None:
    page.click("#tab-recall")
    page.get_by_label("work", exact=True).uncheck()
    expect(page).to_have_url(re.compile(r"#/recall\?vaults=personal$"))
    page.fill("#recall-message", "zorblat tomatoes")
    with page.expect_response(lambda r: r.url.endswith("/context")) as answer:
        page.click("#recall-button")
    assert answer.value.request.post_data_json["vaults"] == ["personal"]
    rows = page.locator("#recall-considered tbody tr")
    expect(rows.first).to_be_visible()
    assert set(page.locator("#recall-considered .vault-mark").all_inner_texts()) == {"personal"}
    expect(page.locator("#recall-missing")).to_be_hidden()


def test_the_recall_preview_gives_again_what_another_vault_holds_at_the_same_path(page: Any) -> None:
    page.click("#tab-recall")
    page.fill("#recall-message", "Inbox zorblat budget seeds")  # each vault's Inbox holds two of its words
    with page.expect_response(lambda r: r.url.endswith("/context")) as first:
        page.click("#recall-button")
    given = first.value.json()["sources"]
    assert {s["vault"] for s in given if s["note_path"] == "Inbox.md"} == {"work", "personal"}
    # the same message again: what was given is named by its vault, as the plugin names it
    with page.expect_response(lambda r: r.url.endswith("/context")) as second:
        page.click("#recall-button")
    sent = second.value.request.post_data_json["exclude"]
    assert sorted(sent) == sorted(f"vault:{s['vault']}/{s['attribution']}" for s in given)
    assert second.value.json()["sources"] == []


def test_the_index_panel_lists_each_vault_with_its_own_actions(page: Any) -> None:
    page.click("#tab-index")
    rows = page.locator("#vault-states tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("work")
    expect(rows.nth(1)).to_contain_text("personal")
    expect(page.locator("#sync-button")).to_be_hidden()  # a job is of one vault: each row has its own
    expect(page.locator("#summary")).to_contain_text("2 vaults · 4 notes")
    with page.expect_response(lambda r: "/index/sync" in r.url) as started:
        page.get_by_role("button", name="Sync personal").click()
    assert started.value.status == 202
    assert started.value.url.endswith("/index/sync?vault=personal")
    page.select_option("#status-vault", "personal")
    expect(page.locator("#status-facts")).to_contain_text("Personal")  # the vault's folder
    page.click("#tab-notes")
    page.select_option("#notes-vault", "personal")
    # the work vault's list holds two notes as well: wait for the personal one's own
    expect(page.locator("#notes-list")).to_contain_text("Garden")
    expect(page.locator("#notes-list li")).to_have_count(2)
    page.locator("#notes-list button", has_text="Inbox").click()
    expect(page.locator("#note-rendered")).to_contain_text("tomatoes")


def test_a_vault_removed_is_named_over_the_results(browser: Any, tmp_path: Path) -> None:
    with two_vaults.serving(tmp_path, notes=(WORK, PERSONAL)) as base:
        shutil.rmtree(tmp_path / "Personal")
        with opened(browser, base) as seen:
            page = seen.page
            search(page, "zorblat", mode="keyword")
            notice = page.locator("#search-missing")
            expect(notice).to_be_visible()
            expect(notice).to_contain_text("personal did not answer")
            assert _marks(page) == {"work"}
            page.click("#tab-index")
            expect(page.locator("#vault-states tr[data-vault=personal]")).to_contain_text("unavailable")
