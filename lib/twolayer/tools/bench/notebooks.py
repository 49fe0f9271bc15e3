"""Every chapter notebook timed in a fresh process with its kernel's peak memory
(``notebooks``), and the whole book build; ``--keep`` keeps each run for
:mod:`twolayer.tools.paperscale`."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from ...core.io import atomic_write_json, repository_root

ROOT = repository_root()


def bench_notebooks(
    profile: str = "book",
    build: bool = True,
    timeout: float | None = None,
    chapters: list[str] | None = None,
    *,
    progress_file: str | os.PathLike | None = None,
    keep: str | os.PathLike | None = None,
) -> dict:
    """Execute every chapter (or ``chapters``, e.g. ``paper_a/setting``) in ``profile`` with
    the notebook runner (:func:`twolayer.tools.runner.execute`), each in a fresh process (to
    read its kernel's peak RSS) and stopped after ``timeout`` seconds; then, with ``build``,
    time a whole ``jupyter-book build``. ``progress_file``: a JSON file updated (atomically)
    after each chapter; chapters it already holds are not run again (a long paper-profile
    measurement resumes). ``keep``: a folder that receives each chapter's executed notebook
    and results file (``<paper>/<chapter>.ipynb`` and ``.json``, the chapter's
    ``results_path``), from which :mod:`twolayer.tools.paperscale` makes the tables and
    figures the book shows beside its own."""
    import subprocess
    import tempfile

    # one process per chapter, so that its children's peak RSS is its kernel's
    code = (
        "import json, resource, sys, time\n"
        "import papermill as pm\n"
        "from twolayer.tools.runner import execute\n"
        "t = time.perf_counter()\n"
        "try:\n"
        "    execute(sys.argv[1], sys.argv[2], {'profile': sys.argv[3]},"
        " results_path=sys.argv[4] or None)\n"
        "    err = None\n"
        "except pm.PapermillExecutionError as exc:\n"
        "    err = f'{exc.ename}: {exc.evalue}'[:400]\n"
        "print(json.dumps({'seconds': time.perf_counter() - t, 'error': err,"
        " 'rss_mb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))\n"
    )
    done: dict = {}
    if progress_file is not None and Path(progress_file).exists():
        done = json.loads(Path(progress_file).read_text()).get("chapters", {})
    out = {}
    notebooks = sorted((ROOT / "notebooks").glob("*/*.ipynb"))
    if chapters:
        notebooks = [nb for nb in notebooks if f"{nb.parent.name}/{nb.stem}" in chapters]
    with tempfile.TemporaryDirectory() as tmp:
        for nb in notebooks:
            key = f"{nb.parent.name}/{nb.stem}"
            if key in done:
                out[key] = done[key]
                continue
            t0 = time.perf_counter()
            executed, results = Path(tmp) / nb.name, ""
            if keep is not None:
                (Path(keep) / nb.parent.name).mkdir(parents=True, exist_ok=True)
                executed = (Path(keep) / key).with_suffix(".ipynb").resolve()
                results = str((Path(keep) / key).with_suffix(".json").resolve())
            try:
                res = subprocess.run(
                    [sys.executable, "-c", code, str(nb), str(executed), profile, results],
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                )
                if res.returncode != 0:
                    out[key] = {"error": (res.stderr.strip().splitlines() or ["?"])[-1]}
                else:
                    out[key] = json.loads(res.stdout.strip().splitlines()[-1])
            except subprocess.TimeoutExpired:
                out[key] = {
                    "error": f"did not finish in {timeout:.0f} s",
                    "seconds": None,
                    "timed_out_after": time.perf_counter() - t0,
                }
            if progress_file is not None:
                atomic_write_json(progress_file, {"profile": profile, "chapters": out})
        book = None
        if build:
            t = time.perf_counter()
            jb = Path(sys.executable).with_name("jupyter-book")
            res = subprocess.run(
                [str(jb), "build", str(ROOT), "--path-output", tmp],
                capture_output=True,
                text=True,
                env={**os.environ, "BOOK_PROFILE": profile},
            )
            book = time.perf_counter() - t if res.returncode == 0 else None
    ok = {k: v for k, v in out.items() if v.get("seconds") is not None and not v.get("error")}
    largest = max(ok, key=lambda k: ok[k]["rss_mb"]) if ok else None
    return {
        "profile": profile,
        "notebook_seconds": {
            k: v.get("seconds") if not v.get("error") else None for k, v in out.items()
        },
        "notebook_rss_mb": {k: v.get("rss_mb") for k, v in out.items()},
        "failed": {k: v["error"] for k, v in out.items() if v.get("error")},
        "book_seconds": book,
        "peak_rss_mb": ok[largest]["rss_mb"] if largest else None,
        "peak_rss_notebook": largest,
    }
