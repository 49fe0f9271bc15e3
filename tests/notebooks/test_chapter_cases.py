"""Chapters run with parameters other than their defaults, where a statement promises
something for those parameters (done-when items of the chapters' issues), and the real-images
chapter's data handling through the notebook (the loader itself: tests/paper_a/test_images.py).
"""

from __future__ import annotations

import hashlib
import json

import nbformat
import numpy as np
import papermill as pm
import pytest

from helpers import ROOT, run_chapter

pytestmark = pytest.mark.slow
A = ROOT / "notebooks" / "paper_a"
B = ROOT / "notebooks" / "paper_b"


def _no_failed_check(res):
    assert res["checks"] and not [k for k, v in res["checks"].items() if v not in (True, None)]


def test_gradient_flow_other_parameters_certify_every_item(tmp_path):
    """Other n, d, m1 != m2, gamma, loss and seed inside Theorem 3.2's assumption: every
    theorem check of Theorem 3.2 applies and passes (none is "not applicable")."""
    res = run_chapter(
        A / "gradient_flow",
        tmp_path,
        seed=3,
        n=10,
        d=25,
        m1=4,
        m2=2,
        gamma=0.7,
        loss="logistic",
        gap=0.8,
    )
    assert {k: res["params"][k] for k in ("seed", "n", "d", "m1", "m2", "gamma", "loss")} == {
        "seed": 3,
        "n": 10,
        "d": 25,
        "m1": 4,
        "m2": 2,
        "gamma": 0.7,
        "loss": "logistic",
    }
    _no_failed_check(res)
    thm = {
        k: res["checks"][k]
        for k, d in res["check_details"].items()
        if d["kind"] == "theorem" and (d["statement"] or "").startswith("a-thm-3-2")
    }
    assert thm and all(v is True for v in thm.values()), thm


def test_gradient_flow_outside_the_assumption_builds_and_says_so(tmp_path):
    """gap = 1.5: the data break Theorem 3.2's near-orthogonality. The page still runs, the
    theorem's checks on those data are recorded as not applicable with the reason, none is
    false, and the page's glued sentence says that the theorem does not cover them."""
    res = run_chapter(A / "gradient_flow", tmp_path, gap=1.5, seed=4)
    hyp = res["hypotheses"]["near_orthogonality"]
    assert hyp["holds"] is False and hyp["value"] > 1, hyp
    _no_failed_check(res)
    na = {
        k: d
        for k, d in res["check_details"].items()
        if d["kind"] == "theorem" and res["checks"][k] is None
    }
    assert len(na) >= 5, sorted(na)  # items 1-7 on the page's data
    assert all(d["reason"] for d in na.values())
    out = nbformat.read(tmp_path / "gradient_flow-out.ipynb", as_version=4)
    glued = json.dumps([o for c in out.cells if c.cell_type == "code" for o in c.outputs])
    assert "near_orthogonality" in glued and "does not cover these parameters" in glued


def test_stage3_with_another_teacher(tmp_path):
    """Paper B, Stage 3 with another teacher (r = 3, m* = 4, seed 5) runs through and
    records its teacher; every check passes or is recorded as not applicable."""
    res = run_chapter(B / "stage3", tmp_path, r=3, m_star=4, seed=5)
    p = res["params"]
    assert (p["r"], p["m_star"], p["seed"]) == (3, 4, 5)
    _no_failed_check(res)


def _learnable_archive(path, n_per_batch=40, n_test=200, seed=0):
    """Official-format archive whose two classes (vehicles vs animals) differ in mean colour."""
    from twolayer.paper_a import images

    rng = np.random.default_rng(seed)

    def batch(n):
        labels = rng.integers(0, 10, n)
        pos = np.isin(labels, images.POSITIVE_CLASSES["cifar10"])
        base = np.where(pos[:, None], 150, 100) + 25 * rng.standard_normal((n, 3072))
        return np.clip(base, 0, 255).astype(np.uint8), labels

    return images.write_cifar10_like(path, [batch(n_per_batch) for _ in range(5)], batch(n_test))


def test_cifar10_without_data_stops_with_clear_message(tmp_path, monkeypatch):
    from twolayer.paper_a import images

    monkeypatch.delenv(images.CIFAR10_ENV, raising=False)
    missing = tmp_path / "no-such-folder"
    path = tmp_path / "r.json"
    with pytest.raises(pm.PapermillExecutionError) as err:
        run_chapter(
            A / "real_images",
            tmp_path,
            dataset="cifar10",
            data_dir=str(missing),
            results_path=str(path),
        )
    e = err.value
    assert e.ename == "DatasetUnavailable" and "CIFAR-10 is not available" in e.evalue
    assert str(missing / images.CIFAR10_ARCHIVE) in e.evalue and "does not exist" in e.evalue
    assert "dataset='digits'" in e.evalue
    assert not path.exists()


def test_corrupt_archive_with_its_checksum_is_refused_by_the_notebook(tmp_path):
    from twolayer.paper_a import images

    archive = _learnable_archive(tmp_path / images.CIFAR10_ARCHIVE)
    raw = bytearray(archive.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / images.CIFAR10_ARCHIVE).write_bytes(bytes(raw))
    md5 = hashlib.md5(bytes(raw)).hexdigest()  # the checksum passes: decoding must refuse it
    with pytest.raises(pm.PapermillExecutionError) as err:
        run_chapter(
            A / "real_images",
            tmp_path,
            dataset="cifar10",
            data_dir=str(bad),
            archive_md5=md5,
            n_train=200,  # what the small archive holds
        )
    assert err.value.ename == "ArchiveError" and "corrupt" in err.value.evalue, (
        err.value.ename,
        err.value.evalue,
    )


def test_generated_archive_runs_the_chapter(tmp_path):
    from twolayer.paper_a import images

    archive = _learnable_archive(tmp_path / images.CIFAR10_ARCHIVE)
    data = archive.read_bytes()
    res = run_chapter(
        A / "real_images",
        tmp_path,
        dataset="cifar10",
        data_dir=str(tmp_path),
        archive_md5=hashlib.md5(data).hexdigest(),
        archive_sha256=hashlib.sha256(data).hexdigest(),
        n_train=200,
        n_test=0,
        width=64,
        steps=500,
    )
    assert res["params"]["dataset"] == "cifar10"
    _no_failed_check(res)
