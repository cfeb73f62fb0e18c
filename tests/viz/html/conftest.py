"""Fixtures for the HTML viewer: one headless Chromium for the session, a fresh page per
test that records every network request, dialog, console error and page error (a test
fails on any of them), and the reports the tests open, built once from real genesis runs."""
from __future__ import annotations

import shutil

import pytest

from . import reports

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="session")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="playwright is not installed (.venv/bin/pip install playwright)")
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        pytest.skip("no Chromium on PATH (Debian: apt-get install chromium)")
    playwright = sync_api.sync_playwright().start()
    browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
    yield browser
    browser.close()
    playwright.stop()


class Session:
    """A page with its record of problems: requests other than the page itself (and about:,
    data:), dialogs (alert/confirm/prompt), console errors and uncaught page errors."""

    def __init__(self, page):
        self.page = page
        self.problems = []
        self.requests = []
        self.allowed = set()
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        page.on("dialog", self._dialog)
        page.on("request", lambda request: self.requests.append(request.url))
        page.route("**/*", self._route)

    def _console(self, message) -> None:
        if message.type == "error":
            self.problems.append(f"console error: {message.text}")

    def _dialog(self, dialog) -> None:
        self.problems.append(f"dialog {dialog.type}: {dialog.message}")
        dialog.dismiss()

    def _route(self, route) -> None:
        url = route.request.url
        if url in self.allowed:
            route.continue_()
        else:
            self.problems.append(f"network request: {url}")
            route.abort()

    def open(self, path) -> None:
        """Navigate to a report file and wait until the viewer says it is ready."""
        url = path.as_uri()
        self.allowed.add(url)
        self.page.goto(url)
        self.page.wait_for_selector("body[data-viewer=ready]", timeout=15_000)

    def outside_requests(self) -> list:
        return [url for url in self.requests
                if url not in self.allowed and not url.startswith(("data:", "about:"))]


@pytest.fixture
def session(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    session = Session(page)
    yield session
    context.close()
    assert not session.problems, session.problems
    assert not session.outside_requests(), session.outside_requests()


@pytest.fixture(scope="session")
def model_trace():
    return reports.model_trace()


@pytest.fixture(scope="session")
def model_report(model_trace, tmp_path_factory):
    path = tmp_path_factory.mktemp("html") / "report.html"
    reports.write(model_trace, path)
    return path


@pytest.fixture(scope="session")
def hostile_report(tmp_path_factory):
    path = tmp_path_factory.mktemp("html") / "hostile.html"
    reports.write(reports.hostile_trace(), path)
    return path


@pytest.fixture(scope="session")
def two_graph_report(tmp_path_factory):
    path = tmp_path_factory.mktemp("html") / "two_graphs.html"
    reports.write(reports.two_graph_trace(), path)
    return path


@pytest.fixture(scope="session")
def deep_report(tmp_path_factory):
    path = tmp_path_factory.mktemp("html") / "deep.html"
    reports.write(reports.deep_trace(), path)
    return path
