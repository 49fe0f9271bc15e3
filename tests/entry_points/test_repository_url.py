"""One source for where the book lives: ``_config.yml``'s ``repository.url``
(``https://github.com/<owner>/<repo>``). The site is ``https://<owner>.github.io/<repo>/``,
what the workflow (.github/workflows/ci.yml) deploys to GitHub Pages from that repository.
Every other place that names either must agree with it, and this test names each one that
does not: the README's "Read the book" link and its link to the repository, CITATION.cff's
``repository-code`` and ``url``, ``html.baseurl`` in ``_config.yml``, every notebook's
install cell (its ``.md`` and its ``.ipynb``), and any other GitHub or GitHub Pages URL in the
book's text, the notebooks, the configuration and the workflows. A fork changes
``repository.url`` and then what this test lists."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import yaml

from helpers import ROOT

URL = re.compile(
    r"https?://(?:[\w.-]+\.)?github(?:usercontent)?\.(?:com|io)(?:/[^\s)>\]\"'`<,\\]*)?"
)
SCANNED = (
    "README.md",
    "CITATION.cff",
    "_config.yml",
    "environment.yml",
    "book/*.md",
    "notebooks/*/*.md",
    "notebooks/*/*.ipynb",
    ".github/workflows/*.yml",
)


def repository_url(root: Path) -> str:
    cfg = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    return cfg["repository"]["url"].rstrip("/")


def pages_url(repo_url: str) -> str:
    """``https://github.com/<owner>/<repo>`` -> ``https://<owner>.github.io/<repo>/``."""
    m = re.fullmatch(r"https://github\.com/([\w.-]+)/([\w.-]+)", repo_url)
    assert m, f"repository.url must be https://github.com/<owner>/<repo>; got {repo_url!r}"
    return f"https://{m.group(1).lower()}.github.io/{m.group(2)}/"


def _install_cell(path: Path) -> str:
    import jupytext

    nb = jupytext.read(path)
    return next(c.source for c in nb.cells if c.cell_type == "code")


def mismatches(root: Path) -> list[str]:
    """Every place under ``root`` that disagrees with ``repository.url`` (empty: none)."""
    repo = repository_url(root)
    site = pages_url(repo)
    out = []
    readme = (root / "README.md").read_text(encoding="utf-8")
    if f"**Read the book: <{site}>**" not in readme:
        out.append(f"README.md: the first line must read **Read the book: <{site}>**")
    if f"]({repo})" not in readme:
        out.append(f"README.md: link the repository ({repo})")
    cff = yaml.safe_load((root / "CITATION.cff").read_text(encoding="utf-8"))
    if cff.get("repository-code", "").rstrip("/") != repo:
        out.append(f"CITATION.cff: repository-code must be {repo}")
    if cff.get("url", "").rstrip("/") != site.rstrip("/"):
        out.append(f"CITATION.cff: url must be {site}")
    cfg = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    if cfg.get("html", {}).get("baseurl", "").rstrip("/") != site.rstrip("/"):
        out.append(f"_config.yml: html.baseurl must be {site}")
    for md in sorted(root.glob("notebooks/*/*.md")):
        for path in (md, md.with_suffix(".ipynb")):
            if path.exists() and f'"twolayer @ git+{repo}"' not in _install_cell(path):
                out.append(
                    f"{path.relative_to(root)}: the install cell must install "
                    f'"twolayer @ git+{repo}"'
                )
    for pattern in SCANNED:
        for path in sorted(root.glob(pattern)):
            text = path.read_text(encoding="utf-8")
            for url in sorted(set(URL.findall(text))):
                if url.rstrip("/.") in ("https://github.com", "https://github.io"):
                    continue
                if not (url.startswith((repo + "/", site)) or url.rstrip("/.") == repo):
                    out.append(f"{path.relative_to(root)}: {url} is neither {repo} nor {site}")
    return out


def test_one_repository_url_everywhere():
    assert mismatches(ROOT) == []


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "book"
    for pattern in SCANNED:
        for path in ROOT.glob(pattern):
            dest = root / path.relative_to(ROOT)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest)
    assert mismatches(root) == []
    return root


def test_a_fork_is_told_every_place_to_change(tmp_path):
    """Changing only repository.url (a fork): every derived place is named."""
    root = _copy(tmp_path)
    cfg = root / "_config.yml"
    old = repository_url(ROOT)
    cfg.write_text(cfg.read_text().replace(f"url: {old}", "url: https://github.com/alice/tl-fork"))
    found = "\n".join(mismatches(root))
    assert "**Read the book: <https://alice.github.io/tl-fork/>**" in found
    assert "CITATION.cff: repository-code" in found and "CITATION.cff: url" in found
    assert "html.baseurl must be https://alice.github.io/tl-fork/" in found
    for md in ROOT.glob("notebooks/*/*.md"):
        assert f"{md.relative_to(ROOT)}: the install cell" in found
        assert f"{md.with_suffix('.ipynb').relative_to(ROOT)}: the install cell" in found


def test_a_planted_difference_is_caught(tmp_path):
    """One notebook installing from elsewhere, and one stray link in a book page."""
    root = _copy(tmp_path)
    repo = repository_url(ROOT)
    nb = root / "notebooks" / "paper_b" / "stage1.md"
    nb.write_text(nb.read_text().replace(repo, "https://github.com/someone/else"))
    page = root / "book" / "how-to-run.md"
    page.write_text(page.read_text() + "\nSee <https://other.github.io/twolayer-book/>.\n")
    found = mismatches(root)
    assert any(m.startswith("notebooks/paper_b/stage1.md: the install cell") for m in found)
    assert any("https://github.com/someone/else" in m for m in found)
    assert any(m.startswith("book/how-to-run.md: https://other.github.io") for m in found)
    assert len(found) == 3, found


def test_pages_url_is_derived():
    assert pages_url("https://github.com/Owner/repo") == "https://owner.github.io/repo/"
