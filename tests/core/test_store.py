"""Tests of twolayer.core.store (the per-configuration run store) and
twolayer.paper_a.rankdecay."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from twolayer.core.params import OptionalDir, ParameterError
from twolayer.core.store import RunStore, canonical_config, config_key
from twolayer.paper_a import rankdecay


def cfg(**kw):
    base = {"d": 10, "lr": 0.1, "name": "a", "flag": True, "none": None}
    return {**base, **kw}


def test_key_is_stable_and_order_independent():
    a = cfg()
    b = dict(reversed(list(a.items())))
    assert config_key(a) == config_key(b)
    assert config_key(a) != config_key(cfg(lr=0.2))
    assert config_key(cfg(d=np.int64(10), lr=np.float64(0.1))) == config_key(a)
    assert len(config_key(a)) == 24 and all(c in "0123456789abcdef" for c in config_key(a))


@pytest.mark.parametrize(
    "bad, err",
    [
        ({}, TypeError),
        ({"x": [1, 2]}, TypeError),
        ({"x": {"y": 1}}, TypeError),
        ({"x": float("nan")}, ValueError),
        ({"x": float("inf")}, ValueError),
        ({1: 2}, TypeError),
        ({"x": object()}, TypeError),
    ],
)
def test_bad_configurations_are_refused(bad, err):
    with pytest.raises(err):
        canonical_config(bad)


def test_save_load_missing(tmp_path):
    store = RunStore(tmp_path / "s")
    assert store.keys() == [] and len(store) == 0
    c1, c2 = cfg(seed=1), cfg(seed=2)
    assert store.missing([c1, c2]) == [c1, c2]
    arrays = {"steps": np.arange(4), "sr": np.linspace(1, 2, 4)}
    key = store.save(c1, arrays, {"min": 1.0, "ok": True})
    assert key == config_key(c1)
    assert store.has(c1) and not store.has(c2)
    assert store.missing([c1, c2]) == [c2]
    got, met = store.load(c1)
    assert set(got) == {"steps", "sr"}
    np.testing.assert_array_equal(got["sr"], arrays["sr"])
    assert got["sr"].dtype == np.float64 and met == {"min": 1.0, "ok": True}
    with pytest.raises(KeyError):
        store.load(c2)
    assert store.keys() == [key] and len(store) == 1
    # the JSON commit marker records the configuration
    rec = json.loads((tmp_path / "s" / f"{key}.json").read_text())
    assert rec["config"] == canonical_config(c1)
    assert not [p for p in os.listdir(tmp_path / "s") if p.endswith(".tmp")]


def test_incomplete_or_foreign_entries_count_as_missing(tmp_path):
    store = RunStore(tmp_path)
    c = cfg()
    key = store.save(c, {"x": np.ones(3)})
    # a killed writer that left only the arrays: missing
    (tmp_path / f"{key}.json").unlink()
    assert store.missing([c]) == [c]
    store.save(c, {"x": np.ones(3)})
    # a corrupt JSON marker: missing
    (tmp_path / f"{key}.json").write_text("{not json")
    assert not store.has(c)
    # a marker recording another configuration (hash collision or tampering): missing
    (tmp_path / f"{key}.json").write_text(json.dumps({"config": cfg(d=11), "metrics": {}}))
    assert not store.has(c)
    store.save(c, {"x": np.ones(3)})
    # truncated arrays: missing
    (tmp_path / f"{key}.npz").write_bytes(b"PK\x03\x04 broken")
    assert not store.has(c)


def test_object_arrays_are_refused_and_pickles_never_loaded(tmp_path):
    store = RunStore(tmp_path)
    with pytest.raises(TypeError):
        store.save(cfg(), {"x": np.array([{"a": 1}], dtype=object)})
    with pytest.raises(ValueError):
        store.save(cfg(), {})
    # an npz holding an object array (written by someone else) is not loadable without pickle
    key = config_key(cfg())
    np.savez(tmp_path / f"{key}.npz", x=np.array([{"a": 1}], dtype=object))
    (tmp_path / f"{key}.json").write_text(
        json.dumps({"config": canonical_config(cfg()), "metrics": {}})
    )
    assert not store.has(cfg())


def test_folder_spec():
    f = OptionalDir()
    assert f.validate("store_dir", None) is None
    assert f.validate("store_dir", "runs/x") == "runs/x"
    for bad in (3, "", "  ", ["a"]):
        with pytest.raises(ParameterError, match="store_dir"):
            f.validate("store_dir", bad)


# --- rankdecay: each configuration's result depends on that configuration only --------------------


def _configs(**kw):
    base = dict(n=8, m=4, gamma=0.1, beta=0.3, steps=5, n_test=20, records=4, seed=0)
    base.update(kw)
    return [
        rankdecay.config(d=d, init_scale=s, lr=lr, **base)
        for d in (12, 20)
        for s, lr in ((1.0, 0.16), (0.02, 0.01))
    ]


def test_rankdecay_results_do_not_depend_on_the_batch():
    cs = _configs()
    together = rankdecay.run(cs)
    alone = [rankdecay.run([c])[0] for c in reversed(cs)][::-1]
    # the same numbers up to rounding: BLAS may order sums differently for another batch shape
    for (c1, a1, m1), (c2, a2, m2) in zip(together, alone):
        assert c1 == c2 and m1.keys() == m2.keys()
        for k in m1:
            assert m1[k] == pytest.approx(m2[k], rel=1e-10, abs=1e-12), k
        for k in rankdecay.ARRAYS:
            np.testing.assert_allclose(a1[k], a2[k], rtol=1e-10, atol=1e-12)
    # the same batch twice: the same bits
    again = rankdecay.run(cs)
    for (_, a1, m1), (_, a2, m2) in zip(together, again):
        assert m1 == m2
        for k in rankdecay.ARRAYS:
            np.testing.assert_array_equal(a1[k], a2[k])
    cfg0, arrays, met = together[0]
    assert arrays["steps"][0] == 0 and arrays["steps"][-1] == 5
    # another seed: other data and init
    other = rankdecay.run(_configs(seed=1)[:1])[0]
    assert other[2] != met


def test_rankdecay_test_accuracy_is_that_of_the_training_mixture():
    """The test set comes from the training set's mixture (the same ``mu``), so after one step
    from a small initialization, where the network classifies by ``sign(v.x)`` with
    ``v = sum_i y_i x_i = n mu + N(0, n I_d)`` (the gradient at 0 is rank one along ``v``; the
    activation is increasing with ``phi(0) = 0`` and the two halves of the layer are equal), its
    test accuracy is that of this mean classifier, ``Phi(r cos)`` with ``r = ||mu|| = d^beta``
    and ``cos ~ r / sqrt(r^2 + d / n)``, within 4 binomial standard errors of the test sample.
    A test set with a mean of its own scores about 1/2."""
    d, n, n_test, beta = 20, 40, 400, 0.3
    cfg = rankdecay.config(
        d=d,
        n=n,
        m=4,
        gamma=0.1,
        beta=beta,
        init_scale=0.02,
        lr=0.16,
        steps=1,
        seed=0,
        n_test=n_test,
        records=2,
    )
    _, _, met = rankdecay.run([cfg])[0]
    r = d**beta
    p = 0.5 * (1 + math.erf(r * r / math.sqrt(r * r + d / n) / math.sqrt(2)))  # 0.991 here
    se = math.sqrt(p * (1 - p) / n_test)
    assert met["test_accuracy"] >= p - 4 * se - 1 / n_test, (met["test_accuracy"], p)


def test_rankdecay_compute_with_store(tmp_path):
    cs = _configs()
    store = RunStore(tmp_path)
    first, computed = rankdecay.compute(cs[:2], store)
    assert computed == 2 and len(store) == 2
    second, computed = rankdecay.compute(cs, store)
    assert computed == 2 and len(store) == 4
    third, computed = rankdecay.compute(cs, store)
    assert computed == 0
    memory, computed = rankdecay.compute(cs, None)
    assert computed == 4
    for (c1, a1, m1), (c2, a2, m2), (c3, a3, m3) in zip(second, third, memory):
        assert c1 == c2 == c3 and m1 == m2 == m3
        for k in rankdecay.ARRAYS:
            np.testing.assert_array_equal(a1[k], a2[k])
            np.testing.assert_array_equal(a1[k], a3[k])


def test_glorot_std():
    assert rankdecay.glorot_std(98, 2) == pytest.approx(np.sqrt(6 / 100) / np.sqrt(3))
