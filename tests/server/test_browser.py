"""A real browser (headless Chromium through Playwright) on the served site."""

from __future__ import annotations

from playwright.sync_api import sync_playwright
from registry.wheelmaker import env_wheel

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _visible_names(page) -> list[str]:
    return page.eval_on_selector_all(
        "#components tbody tr:not([hidden]) td:nth-child(2)", "cells => cells.map(c => c.textContent)"
    )


def test_catalogue_filters_component_page_and_upload_form(server, tmp_path):
    token = server.token("dora")
    wheel = env_wheel(tmp_path / "w", "formed", "1.0", summary="Uploaded through the form")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        try:
            page = browser.new_page()
            dialogs = []
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(f"{server.url}/")
            assert sorted(_visible_names(page)) == ["picker", "seed"]
            page.fill("#filter", "corridor")
            assert _visible_names(page) == ["seed"]
            page.fill("#filter", "")
            page.select_option("#kind", "policy")
            assert _visible_names(page) == ["picker"]
            assert page.text_content("#shown") == "1"
            assert "Picks <b>actions</b>" in page.text_content("#components")  # shown as text, not markup

            page.select_option("#kind", "")
            page.click("text=seed")
            page.wait_for_url("**/components/environment/seed.html")
            assert page.text_content("#install") == "agentos install environment seed"
            cells = page.eval_on_selector_all("table td", "cells => cells.map(c => c.textContent)")
            assert "length" in cells and "cells to the goal" in cells
            assert "<script>window.hacked = 1</script>" in page.text_content("pre.description")
            assert page.evaluate("window.hacked") is None

            page.goto(f"{server.url}/upload/")
            page.fill("#token", token)
            page.set_input_files("#content", str(wheel))
            page.click("button[type=submit]")
            page.wait_for_selector("#result")
            assert page.text_content("#result") == f"published {wheel.name}"
            page.goto(f"{server.url}/")
            page.fill("#filter", "form")
            assert _visible_names(page) == ["formed"]

            page.goto(f"{server.url}/upload/")
            page.fill("#token", "agentos-wrong")
            page.set_input_files("#content", str(env_wheel(tmp_path / "x", "refused", "1.0")))
            page.click("button[type=submit]")
            page.wait_for_selector("#result")
            assert page.text_content("#result") == "invalid or unknown API token"
            assert dialogs == []
        finally:
            browser.close()
    assert (server.root / "files" / "agentos-env-formed" / wheel.name).exists()
    assert not (server.root / "files" / "agentos-env-refused").exists()
