"""A strict build of the whole book (smoke profile) and a check of the HTML it produces.

The build runs ``jupyter-book build . -W -n --keep-going`` into a temporary folder, so every
Sphinx warning (a broken reference, a missing citation, a failed cell) fails the test. Then:
every page of ``_toc.yml`` is rendered; chapter pages carry their captioned figures, whose
image files exist; no page shows a traceback or error output; the execution-time table lists
every chapter; and, where Debian's chromium is installed (CI installs it), the front page and a
chapter are screenshotted headless and the screenshots are checked to show a rendered page.
"""
from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import NOTEBOOKS, ROOT

pytestmark = pytest.mark.book


def _toc_files():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        for ch in part.get("chapters", []):
            files.append(ch["file"])
            files += [s["file"] for s in ch.get("sections", [])]
    return files


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("book")
    env = {**os.environ, "BOOK_PROFILE": "smoke"}
    jb = Path(sys.executable).with_name("jupyter-book")
    proc = subprocess.run(
        [str(jb), "build", str(ROOT), "--path-output", str(out), "-W", "-n", "--keep-going"],
        capture_output=True, text=True, env=env, timeout=1800)
    log = proc.stdout + proc.stderr
    (out / "build.log").write_text(log)
    assert proc.returncode == 0, "strict book build failed:\n" + log[-6000:]
    html_dir = out / "_build" / "html"
    assert (html_dir / "index.html").exists()
    return html_dir


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_every_toc_page_rendered(site):
    for f in _toc_files():
        page = site / f"{f}.html"
        assert page.exists(), f"{f} was not rendered"
        assert "<h1" in _text(page)


def test_no_traceback_or_error_output(site):
    bad = re.compile(r"Traceback \(most recent call last\)|output (stderr|traceback)|"
                     r"class=\"[^\"]*\berror\b|ParameterError|CheckFailed")
    for page in site.rglob("*.html"):
        if page.name in ("search.html", "genindex.html"):
            continue
        m = bad.search(_text(page))
        assert m is None, f"{page.relative_to(site)} shows {m.group(0)!r}"


@pytest.mark.parametrize("md", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_chapter_figures_and_checks_present(site, md):
    page = site / md.relative_to(ROOT).with_suffix(".html")
    text = _text(page)
    figures = re.findall(r"<figure[^>]*>.*?</figure>", text, flags=re.S)
    assert figures, "no captioned figure"
    for fig in figures:
        assert "<figcaption" in fig, "figure without caption"
        for src in re.findall(r'<img[^>]+src="([^"]+)"', fig):
            if src.startswith("data:"):
                continue
            assert (page.parent / html.unescape(src)).resolve().exists(), f"missing image {src}"
    # the "Checks on this page" section holds the table of checks, every one passed
    marker = '<section id="checks-on-this-page">'
    assert marker in text, "no 'Checks on this page' section"
    table = text[text.index(marker):].split("</table>")[0]
    assert "<table" in table and "True" in table and "False" not in table


def test_execution_table_lists_every_chapter(site):
    text = _text(site / "book" / "timings.html")
    for md in NOTEBOOKS:
        assert md.stem in text, f"{md.stem} missing from the execution-time table"


def test_citations_resolved(site):
    text = _text(site / "book" / "bibliography.html")
    assert "Frei" in text and "Zhou" in text
    assert "implicit bias in leaky relu networks" in text.lower()


def test_launch_buttons_point_at_repository(site):
    url = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
    text = _text(site / NOTEBOOKS[0].relative_to(ROOT).with_suffix(".html"))
    repo = url.removeprefix("https://github.com/")
    assert f"colab.research.google.com/github/{repo}" in text
    assert "mybinder.org" in text


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.mark.parametrize("page", ["book/intro.html", NOTEBOOKS[0].relative_to(ROOT).with_suffix(".html").as_posix()])
def test_headless_screenshot(site, page, tmp_path):
    browser = _chromium()
    if browser is None:
        pytest.skip("chromium is not installed (CI installs Debian's chromium)")
    shot = tmp_path / "shot.png"
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}", "--hide-scrollbars",
           "--window-size=1280,2400", f"--screenshot={shot}", (site / page).as_uri()]
    subprocess.run(cmd, capture_output=True, timeout=120)
    assert shot.exists() and shot.stat().st_size > 20_000, "no screenshot written"
    from PIL import Image

    img = Image.open(shot).convert("L")
    assert img.size == (1280, 2400)
    lo, hi = img.getextrema()
    assert hi - lo > 100, "the screenshot is blank"
    # a rendered page has text and figures: many distinct grey levels, not a flat error page
    assert len(img.histogram()) == 256 and sum(1 for c in img.histogram() if c) > 50
    keep = ROOT / "_build" / "screenshots"
    keep.mkdir(parents=True, exist_ok=True)
    shutil.copy(shot, keep / page.replace("/", "_").replace(".html", ".png"))
