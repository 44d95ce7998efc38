"""The report and the documentation, opened in a real browser as a reader would.

Headless Chromium (the system's: Debian's ``chromium`` package; Playwright drives it and never
downloads a browser) loads each page over a local HTTP server and fails on any console error
or uncaught exception, any request that fails or answers 4xx/5xx, any image that did not
decode (``naturalWidth == 0``), any link to a page or an anchor that does not exist, and any
element that makes the page scroll sideways at 420 px wide. Screenshots at 1400 px and 420 px
go to ``$MATHLEARN_SCREENSHOTS`` (a temporary directory otherwise), named at the end of the
pytest run.

Run: ``python -m pytest -m browser -v`` (pip install 'mathlearn[browser]' and a Chromium
first; ``$MATHLEARN_CHROMIUM`` names the executable when it is not on the PATH). The report
checked is a small one built here, or ``$MATHLEARN_REPORT`` (an index.html) when set; the
documentation is ``docs/_build/html`` (``$MATHLEARN_DOCS_HTML`` otherwise) once built with
``python -m sphinx docs docs/_build/html``; its test is skipped, saying so, when it is not.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
WIDE, NARROW = 1400, 420
# A full-page screenshot of a taller page is cut to the viewport (Chromium's limits).
MAX_SHOT_HEIGHT = 20000

# The few fast experiments the built report holds: a table, figures with legends, a heat map.
REPORT_EXPERIMENTS = [
    "regression-ill-conditioned",
    "regression-evidence-degree",
    "bandit-posterior",
    "kernels-matern-limit",
    "classification-naive-bayes-pseudocounts",
]


def _chromium() -> str | None:
    named = os.environ.get("MATHLEARN_CHROMIUM")
    if named:
        return named if Path(named).exists() else None
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install '.[browser]')"
    )
    executable = _chromium()
    if executable is None:
        pytest.skip(
            "no Chromium executable (install the system's chromium package, or name one in "
            "$MATHLEARN_CHROMIUM)"
        )
    with sync_api.sync_playwright() as p:
        # --no-sandbox: CI containers run as root, where Chromium's sandbox cannot start.
        b = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            yield b
        finally:
            b.close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def serve():
    """``serve(directory) -> base URL`` of a local HTTP server for that directory."""
    servers = []

    def start(directory: Path) -> str:
        handler = functools.partial(_Quiet, directory=str(directory))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/"

    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


def _favicon(url: str) -> bool:
    return urlparse(url).path == "/favicon.ico"


class _Page:
    """One browser tab that records what went wrong while it loaded pages."""

    def __init__(self, browser, width: int):
        self.context = browser.new_context(viewport={"width": width, "height": 900})
        self.page = self.context.new_page()
        self.problems: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda e: self.problems.append(f"uncaught exception: {e}"))
        self.page.on(
            "requestfailed",
            lambda r: self.problems.append(f"request failed: {r.url} ({r.failure})"),
        )
        self.page.on(
            "response",
            lambda r: (
                r.status >= 400
                and not _favicon(r.url)
                and self.problems.append(f"HTTP {r.status}: {r.url}")
            ),
        )

    def _console(self, message):
        # The browser asks every server for /favicon.ico by itself; a page that names no
        # icon is not broken for that.
        if message.type == "error" and not _favicon(message.location.get("url", "")):
            self.problems.append(f"console error: {message.text}")

    def open(self, url: str) -> list[str]:
        """Load ``url``; what went wrong on it (the list of problems since the last call)."""
        self.problems = []
        self.page.goto(url, wait_until="load")
        # Lazy images load only when scrolled to: load them all, then wait for each.
        self.page.evaluate("for (const i of document.images) i.loading = 'eager'")
        self.page.wait_for_function(
            "Array.from(document.images).every(i => i.complete)", timeout=30000
        )
        broken = self.page.evaluate(
            "Array.from(document.images).filter(i => i.naturalWidth === 0)"
            ".map(i => (i.currentSrc || i.src).slice(0, 100))"
        )
        problems = self.problems + [f"image did not load: {src}" for src in broken]
        return [f"{url}: {p}" for p in problems]

    def links(self) -> list[str]:
        return self.page.evaluate("Array.from(document.querySelectorAll('a[href]'), a => a.href)")

    def ids(self) -> set[str]:
        return set(
            self.page.evaluate(
                "Array.from(document.querySelectorAll('[id], a[name]'), e => e.id || e.name)"
            )
        )

    def sideways(self) -> list[str]:
        """Elements that stick out of a 420 px page and make it scroll sideways."""
        return self.page.evaluate(
            """() => {
              const w = document.documentElement.clientWidth;
              if (document.documentElement.scrollWidth <= w + 1) return [];
              const out = [];
              for (const e of document.body.querySelectorAll('*')) {
                const r = e.getBoundingClientRect();
                if (r.right > w + 1 && r.width > 0) {
                  let p = e.parentElement, clipped = false;
                  while (p && p !== document.body) {
                    const o = getComputedStyle(p).overflowX;
                    if (['auto', 'scroll', 'hidden'].includes(o)) { clipped = true; break; }
                    p = p.parentElement;
                  }
                  if (!clipped) out.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
                      (e.className && typeof e.className === 'string' ?
                       '.' + e.className.split(' ').join('.') : '') +
                      ' right=' + Math.round(r.right));
                }
              }
              return out.length ? out.slice(0, 10) : ['the page is ' +
                  document.documentElement.scrollWidth + ' px wide'];
            }"""
        )

    def screenshot(self, path: Path) -> None:
        height = self.page.evaluate("document.documentElement.scrollHeight")
        self.page.screenshot(path=str(path), full_page=height <= MAX_SHOT_HEIGHT)

    def close(self):
        self.context.close()


def _check(browser, shots: Path, start: str, prefix: str, *, crawl: bool, shoot) -> None:
    """Open ``start`` (and, with ``crawl``, every page it leads to on the same server) at
    420 px, fail on any problem, and screenshot the pages ``shoot(url)`` picks at both
    widths."""
    base = urlparse(start)
    narrow = _Page(browser, NARROW)
    problems: list[str] = []
    ids: dict[str, set[str]] = {}
    wanted: list[tuple[str, str, str]] = []  # (page, link target, fragment)
    queue, seen = [urldefrag(start).url], set()
    try:
        while queue:
            url = queue.pop(0)
            if url in seen:
                continue
            seen.add(url)
            problems += narrow.open(url)
            ids[url] = narrow.ids()
            problems += [f"{url}: scrolls sideways at {NARROW} px: {e}" for e in narrow.sideways()]
            for link in narrow.links():
                target = urlparse(link)
                if target.netloc != base.netloc or target.scheme not in ("http", "https"):
                    continue
                page, frag = urldefrag(link)
                wanted.append((url, page, unquote(frag)))
                if crawl and page not in seen and page.endswith((".html", "/")):
                    queue.append(page)
        # Links to pages that were not crawled (a report has one page) are opened once;
        # links to other files (sources, downloads, images) are fetched.
        for src, page, _ in wanted:
            if page in ids:
                continue
            if page.endswith((".html", "/")):
                problems += narrow.open(page)
                ids[page] = narrow.ids()
            else:
                status = narrow.context.request.get(page).status
                if status >= 400:
                    problems.append(f"{src}: broken link {page} (HTTP {status})")
                ids[page] = set()
        problems += [
            f"{src}: link to a missing anchor {page}#{frag}"
            for src, page, frag in sorted(set(wanted))
            if frag and frag not in ids[page]
        ]
        for width in (WIDE, NARROW):
            tab = _Page(browser, width) if width == WIDE else narrow
            for n, url in enumerate(u for u in ids if shoot(u)):
                problems += tab.open(url)
                tab.screenshot(shots / f"{prefix}-{n:02d}-{width}px.png")
            if tab is not narrow:
                tab.close()
    finally:
        narrow.close()
    assert not problems, "\n".join(problems)


def test_the_report_reads_well_in_a_browser(browser, shots, serve, tmp_path):
    given = os.environ.get("MATHLEARN_REPORT")
    if given:
        index = Path(given)
    else:
        from mathlearn.report._cli import main

        out = tmp_path / "report"
        assert main(["report", "--out", str(out), "--quiet", "--only", *REPORT_EXPERIMENTS]) == 0
        index = out / "index.html"
    base = serve(index.parent)
    _check(browser, shots, base + index.name, "report", crawl=False, shoot=lambda u: True)
    assert (shots / f"report-00-{WIDE}px.png").stat().st_size > 0


def test_the_documentation_reads_well_in_a_browser(browser, shots, serve):
    html = Path(os.environ.get("MATHLEARN_DOCS_HTML", ROOT / "docs" / "_build" / "html"))
    if not (html / "index.html").exists():
        pytest.skip(
            f"the documentation is not built ({html / 'index.html'} is absent): run "
            "python -m sphinx docs docs/_build/html first"
        )
    base = serve(html)
    firsts: dict[str, str] = {}

    def shoot(url: str) -> bool:
        # The front page and the first page of each top-level folder (API, guide, gallery).
        path = urlparse(url).path.strip("/")
        top = path.split("/")[0] if "/" in path else ""
        return firsts.setdefault(top, url) == url

    _check(browser, shots, base + "index.html", "docs", crawl=True, shoot=shoot)
