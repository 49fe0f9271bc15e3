"""The strict build of the whole book (smoke profile; the ``book`` fixture, built once per
session) and a check of the HTML it produces.

The build runs ``jupyter-book build . -W -n --keep-going``, so every Sphinx warning (a broken
reference, a missing citation, a failed cell) fails it. Then: every page of ``_toc.yml`` is
rendered; chapter pages carry their captioned figures, whose image files exist, and their table
of checks, none failed; no page shows a traceback or error output; the execution-time table
has one row per chapter, each executed successfully; and, in a headless Chromium without
network, the pages render (screenshots) and their formulas are typeset by the MathJax served
from the build (no raw TeX is left). On CI (``CI=true``) a missing or failing browser fails the
test instead of skipping it.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from helpers import NOTEBOOKS, ROOT, toc_files

CHAPTER_PAGES = [md.relative_to(ROOT).with_suffix("") for md in NOTEBOOKS]


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


class _Tables(HTMLParser):
    """Every <table> of a page as a list of rows of cell texts."""

    def __init__(self):
        super().__init__()
        self.tables, self._row, self._cell = [], None, None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[-1].append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def tables(text: str) -> list[list[list[str]]]:
    p = _Tables()
    p.feed(text)
    return p.tables


def test_every_toc_page_rendered(book):
    for f in toc_files():
        page = book.html / f"{f}.html"
        assert page.exists(), f"{f} was not rendered"
        assert "<h1" in _text(page)


def test_no_traceback_or_error_output(book):
    bad = re.compile(
        r"Traceback \(most recent call last\)|output (stderr|traceback)|"
        r"class=\"[^\"]*\berror\b|ParameterError|CheckFailed"
    )
    for page in book.html.rglob("*.html"):
        if page.name in ("search.html", "genindex.html", "py-modindex.html"):
            continue
        if page.relative_to(book.html).as_posix() in ("book/api.html", "book/how-to-run.html"):
            # the library reference documents ParameterError and CheckFailed; How to run shows
            # what a failing check prints under nbval (neither page executes a cell)
            continue
        m = bad.search(_text(page))
        assert m is None, f"{page.relative_to(book.html)} shows {m.group(0)!r}"


@pytest.mark.parametrize("page", CHAPTER_PAGES, ids=[p.name for p in CHAPTER_PAGES])
def test_chapter_figures_and_check_table(book, page):
    path = book.html / page.with_suffix(".html")
    text = _text(path)
    figures = re.findall(r"<figure[^>]*>.*?</figure>", text, flags=re.S)
    assert figures, "no captioned figure"
    for fig in figures:
        assert "<figcaption" in fig, "figure without caption"
        for src in re.findall(r'<img[^>]+src="([^"]+)"', fig):
            if src.startswith("data:"):
                continue
            assert (path.parent / html.unescape(src)).resolve().exists(), f"missing image {src}"
    # the "Checks on this page" section holds the table of checks: kind, check, statement,
    # what is measured, measured, bound, result; no result is a failure
    marker = '<section id="checks-on-this-page">'
    assert marker in text, "no 'Checks on this page' section"
    found = [t for t in tables(text[text.index(marker) :]) if t and t[0][:1] == ["kind"]]
    assert found, "no table of checks in 'Checks on this page'"
    head, *rows = found[0]
    assert head == [
        "kind",
        "check",
        "statement",
        "what is measured",
        "measured",
        "bound",
        "margin",
        "result",
    ], head
    assert rows, "the table of checks is empty"
    for row in rows:
        kind, result = row[0], row[-1]
        assert kind in ("hypothesis", "theorem", "observation", "sanity"), row
        assert result in ("pass", "holds") or result.startswith(
            ("not applicable", "does not hold")
        ), row


def test_execution_table_has_one_successful_row_per_chapter(book):
    text = _text(book.html / "book" / "timings.html")
    found = [t for t in tables(text) if t and t[0][:1] == ["Document"]]
    assert len(found) == 1, "no execution-time table on the timings page"
    head, *rows = found[0]
    assert head[:1] == ["Document"] and "Run Time (s)" in head and "Status" in head
    status, runtime = head.index("Status"), head.index("Run Time (s)")
    by_doc = {r[0]: r for r in rows}
    for page in CHAPTER_PAGES:
        row = by_doc.get(page.as_posix())
        assert row is not None, f"{page} missing from the execution-time table"
        assert row[status] == "✅", f"{page}: status {row[status]!r}"
        assert float(row[runtime]) > 0, f"{page}: run time {row[runtime]!r}"


def test_citations_resolved(book):
    text = _text(book.html / "book" / "bibliography.html")
    assert "Frei" in text and "Zhou" in text
    assert "implicit bias in leaky relu networks" in text.lower()


def test_launch_buttons_point_at_repository(book):
    url = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
    text = _text(book.html / CHAPTER_PAGES[0].with_suffix(".html"))
    repo = url.removeprefix("https://github.com/")
    assert f"colab.research.google.com/github/{repo}" in text
    assert "mybinder.org" in text


def test_mathjax_is_served_from_the_build(book):
    """Math renders offline: the pages load MathJax from the build's _static, not a CDN."""
    text = _text(book.html / "book" / "notation.html")
    srcs = re.findall(r'<script[^>]+src="([^"]*mathjax[^"]*)"', text, flags=re.I)
    assert srcs, "no MathJax script on the notation page"
    for src in srcs:
        assert not re.match(r"(https?:)?//", src), f"MathJax from the network: {src}"
        assert (book.html / "book" / html.unescape(src).split("?")[0]).resolve().exists(), src


# --- in a browser -----------------------------------------------------------------------------


def _browser() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI") == "true":
        pytest.fail(
            "no chromium on CI: the browser test must run there (make test installs "
            "Debian's chromium when CI=true)"
        )
    pytest.skip("chromium is not installed (CI installs Debian's chromium)")


def _offline_prefix() -> list[str]:
    """Run the browser in a network namespace of its own where the system allows it (no
    network at all); otherwise its flags below still block every lookup and connection."""
    for prefix in (["unshare", "-n"], ["unshare", "-rn"]):
        if shutil.which(prefix[0]):
            ok = subprocess.run([*prefix, "true"], capture_output=True, timeout=30)
            if ok.returncode == 0:
                return prefix
    return []


def _chromium(args: list[str], profile: Path, timeout: int = 180):
    cmd = [
        *_offline_prefix(),
        _browser(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        "--disable-extensions",
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost",
        "--proxy-server=127.0.0.1:9",
        f"--user-data-dir={profile}",
        *args,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"chromium exited with {proc.returncode}:\n" + proc.stderr[-3000:]
    return proc


PAGES = ["book/intro.html", "book/notation.html", CHAPTER_PAGES[0].with_suffix(".html").as_posix()]


@pytest.mark.parametrize("page", PAGES)
def test_headless_screenshot(book, page, tmp_path):
    shot = tmp_path / (page.replace("/", "_").replace(".html", ".png"))  # outside the checkout
    _chromium(
        [
            "--hide-scrollbars",
            "--window-size=1280,2400",
            "--virtual-time-budget=20000",
            f"--screenshot={shot}",
            (book.html / page).as_uri(),
        ],
        tmp_path / "profile",
    )
    assert shot.exists() and shot.stat().st_size > 20_000, "no screenshot written"
    from PIL import Image

    img = Image.open(shot).convert("L")
    assert img.size == (1280, 2400)
    lo, hi = img.getextrema()
    assert hi - lo > 100, "the screenshot is blank"
    # a rendered page has text and figures: many distinct grey levels, not a flat error page
    assert sum(1 for c in img.histogram() if c) > 50
    print(f"screenshot: {shot}")


RAW_TEX = re.compile(r"\\\(|\\\[|\$\$|\\begin\{|\\frac|\\mathbb")


@pytest.mark.parametrize("page", PAGES[1:])
def test_formulas_are_typeset_no_raw_tex_left(book, page, tmp_path):
    """After MathJax has run (virtual time), every formula is an <mjx-container> and no TeX
    source is left in the page's visible text."""
    proc = _chromium(
        ["--virtual-time-budget=20000", "--dump-dom", (book.html / page).as_uri()],
        tmp_path / "profile",
    )
    dom = proc.stdout
    n_math = len(re.findall(r'class="math notranslate nohighlight"', _text(book.html / page)))
    assert n_math > 0, f"{page} has no formula to check"
    typeset = len(re.findall(r"<mjx-container\b", dom))
    assert typeset >= n_math, f"{typeset} typeset formulas for {n_math} in the source"
    visible = re.sub(
        r"<(script|style|pre|code|mjx-container|textarea)\b.*?</\1>", "", dom, flags=re.S | re.I
    )
    visible = re.sub(r"<[^>]+>", " ", visible)
    m = RAW_TEX.search(html.unescape(visible))
    assert m is None, f"raw TeX left in {page}: ...{visible[max(0, m.start() - 80) : m.end() + 80]}"
