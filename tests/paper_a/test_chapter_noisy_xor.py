"""The noisy-XOR chapter's module (``twolayer.paper_a.chapters.noisy_xor``): its parameters,
and the setup the page states, recomputed by independent routes from what actually ran.

The page says: noisy 2-XOR, ``x = c + xi`` with ``c`` uniform on ``{+-mu_1, +-mu_2}``
(orthogonal, ``||mu_i|| = d^beta``), ``xi ~ N(0, I_d)``, ``y = sign(|<mu_1, x>| -
|<mu_2, x>|)``, test points from the same law (the same ``mu``), each data set scaled by
``1 / sqrt(d + ||mu||^2)``; ``m = 2 m_half`` neurons, the leaky ReLU with leak ``gamma``, rows
``w_j ~ N(0, scale^2 / k I_k)`` in the ``k`` span coordinates, one draw per data set shared by
the scales; loss-normalized gradient descent on the named loss with step ``1 / R_max^2``;
every run of the sweep trained for the same number of steps. Each is checked against a hand
computation in NumPy.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from twolayer.core.params import ParameterError
from twolayer.paper_a.chapters import noisy_xor as chapter

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "notebooks" / "paper_a" / "noisy_xor.md"

# a tiny page: the assumption fails at d = 3 and holds at d = 10^9, so the held runs are
# extended and (equal steps) the others with them
TINY = dict(
    n=8,
    dims=[3, 10**9],
    seeds=2,
    n_test=400,
    n_low=40,
    m_half=3,
    steps=20,
    tol=0.002,
    init_scales=[0.01, 1.0],
)


@pytest.fixture(scope="module")
def tiny():
    P = chapter.SPEC.params("smoke", **TINY)
    return P, chapter.compute(P, keep_weights=True)


# --- parameters ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, value",
    [
        ("n", 2),
        ("beta", 0.5),
        ("gamma", 0.0),
        ("dims", [64, 2]),
        ("init_scales", [1.0, 0.001]),
        ("loss", "hinge"),
        ("conf", 1.0),
        ("d_low", 1),
    ],
)
def test_bad_parameter_is_named(name, value):
    with pytest.raises(ParameterError, match=name):
        chapter.SPEC.params("smoke", **{name: value})


# --- the setup, recomputed ---------------------------------------------------------------------


def _f(W, X, gamma):
    """f(x; W) = sum_j a_j max(gamma z, z), z = <w_j, x>, a_j = +-1/sqrt(m) (first half +)."""
    m = W.shape[0]
    a = np.where(np.arange(m) < m // 2, 1.0, -1.0) / math.sqrt(m)
    Z = X @ W.T
    return np.maximum(gamma * Z, Z) @ a


def _normalised_gd(W, X, y, gamma, lr, steps):
    """W <- W - lr grad L / L for the exponential loss L = mean exp(-y f), written out:
    grad L / L = -sum_i p_i y_i a_j phi'(<w_j, x_i>) x_i with p = softmax(-y f)."""
    m = W.shape[0]
    a = np.where(np.arange(m) < m // 2, 1.0, -1.0) / math.sqrt(m)
    for _ in range(steps):
        Z = X @ W.T
        q = y * (np.maximum(gamma * Z, Z) @ a)
        p = np.exp(-(q - q.min()))
        p /= p.sum()
        dphi = np.where(Z > 0, 1.0, gamma)
        W = W + lr * ((p * y)[:, None] * dphi * a[None, :]).T @ X
    return W


def test_data_law(tiny):
    """Labels follow |x_1| vs |x_2| on the mean axes; train and test share the cluster means
    (the same norm d^beta, after the scaling 1/sqrt(d + ||mu||^2)); squared norms near 1."""
    P, R = tiny
    b = R.batch
    for i, (d, _) in enumerate(zip(b.info.d, b.info.seed, strict=True)):
        s = math.sqrt(d + d ** (2 * P.beta))
        for X, y in ((b.X[i].numpy(), b.y[i].numpy()), (b.X_test[i].numpy(), b.y_test[i])):
            head = X[:, :2] * s
            assert np.array_equal(y, np.where(np.abs(head[:, 0]) >= np.abs(head[:, 1]), 1, -1))
        # the test set's cluster centres, estimated from its own points, have norm d^beta
        head = b.X_test[i].numpy()[:, :2] * s
        big = np.abs(head).max(axis=1)
        assert np.median(big) == pytest.approx(d**P.beta, abs=0.6)
        if d > 10**6:  # ||x||^2 = (d + ||mu||^2 + O(sqrt d)) / (d + ||mu||^2)
            norms = (b.X[i].numpy() ** 2).sum(axis=1)
            assert np.allclose(norms, 1.0, atol=1e-3)


def test_initialization_law_and_shared_direction(tiny):
    """w_j ~ N(0, scale^2 / k I_k): the rows' empirical variance times k is scale^2, the same
    direction at every scale."""
    P, R = tiny
    B, (m, k) = len(R.batch.info), R.W0.shape[1:]
    assert m == 2 * P.m_half and k == min(P.n + 2, max(P.dims))
    W0 = R.W0.reshape(len(P.init_scales), B, m, k)
    for j, s in enumerate(P.init_scales):
        assert (W0[j] ** 2).mean() * k == pytest.approx(s**2, rel=0.25)  # 3*10*6 = 180 draws
    assert np.allclose(W0[0] / P.init_scales[0], W0[1] / P.init_scales[1], rtol=1e-12)


def test_runs_are_normalised_gd_on_the_named_loss_for_equal_steps(tiny):
    """Every run of the sweep trained for the same number of steps (the held runs' extension);
    its final weights are those of normalized gradient descent on the exponential loss with
    step 1 / max ||x_i||^2, from its own initial weights; its recorded n L / log 2 is the
    exponential loss on those weights; its test error is that of sign f on its test set."""
    P, R = tiny
    steps = R.runs.steps.to_numpy()
    assert len(set(steps)) == 1 and steps[0] >= P.steps
    assert steps[0] > P.steps, "the tiny page should extend its runs"
    B = len(R.batch.info)
    for i in range(len(R.runs)):
        X, y = R.batch.X[i % B].numpy(), R.batch.y[i % B].numpy()
        lr = 1.0 / (X**2).sum(axis=1).max()
        W = _normalised_gd(R.W0[i], X, y, P.gamma, lr, int(steps[i]))
        np.testing.assert_allclose(R.W[i], W, rtol=1e-7, atol=1e-10)
        q = y * _f(R.W[i], X, P.gamma)
        assert R.runs.loss_ratio[i] == pytest.approx(
            np.mean(np.exp(-q)) * P.n / math.log(2), rel=1e-9
        )
        pred = np.sign(_f(R.W[i], R.batch.X_test[i % B].numpy(), P.gamma))
        assert R.runs.test_error[i] == pytest.approx(np.mean(pred != R.batch.y_test[i % B]))


def test_number_of_runs(tiny):
    P, R = tiny
    assert len(R.runs) == len(P.dims) * P.seeds * len(P.init_scales)
    assert len(R.low) == P.seeds * len(P.init_scales) and set(R.low.d) == {P.d_low}
    assert len(R.table) == len(P.dims) * len(P.init_scales)


def test_equal_steps_leave_the_held_runs_unchanged():
    """The runs under the assumption are extended in their own batch: equal steps change only
    the others (the chapter's numbers above the assumption stay bitwise those of before)."""
    from twolayer.paper_a import models, xor

    net = models.LeakyNetwork(3, 3, gamma=0.5)
    b = xor.xor_batch(8, [3, 10**9], 2, 200, beta=0.25, gamma=0.5, seed=4)
    old = xor.train_and_test(net, b, "exp", [0.01, 1.0], steps=40, seed=4, tol=0.05)
    new = xor.train_and_test(
        net, b, "exp", [0.01, 1.0], steps=40, seed=4, tol=0.05, equal_steps=True
    )
    assert old[old.holds].equals(new[new.holds])
    assert (old[~old.holds].steps == 40).all() and (new.steps == new.steps.max()).all()


# --- the prose is MyST with math ------------------------------------------------------------


def test_glued_formulas_are_dollar_math(tiny):
    P, R = tiny
    for text in (chapter.data_text(P), chapter.d_assumption_text(R), chapter.low_data_text(P)):
        assert text.count("$") % 2 == 0 and "$" in text
    assert chapter.d_assumption_text(R) == "$d = 10^{9}$"
    page = PAGE.read_text()
    for name in ("data_text", "high_error_text", "d_chance_text", "d_assumption_text"):
        assert f"{{glue:md}}`{name}:myst`" in page
