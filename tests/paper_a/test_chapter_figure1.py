"""The Figure 1 chapter's module (``twolayer.paper_a.chapters.figure1``): its parameters, and
the setup the page states, recomputed by independent routes from what actually ran.

The page says: a Gaussian mixture ``x = y mu + z``, ``z ~ N(0, I_d)``, ``||mu|| = d^beta``,
labels +-1 with probability 1/2, the test set drawn from the same mixture (the same ``mu``);
``w_j ~ N(0, sigma^2 I_d)`` with ``sigma`` = scale x Glorot's standard deviation (that of
Glorot uniform, ``U(-r, r)`` with ``r = sqrt(6 / (fan_in + fan_out))``); full-batch gradient
descent on the logistic loss with step ``left_lr`` (left panel) and ``right_lr`` (grid), for
``steps`` steps; the runs of one seed at different scales share their initial direction. Each
is checked here against a hand computation in NumPy (the network, the loss and its gradient
written out), never against the library's own expression.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from twolayer.core.params import ParameterError
from twolayer.paper_a.chapters import figure1 as chapter

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "notebooks" / "paper_a" / "figure1.md"

# a tiny page: two runs, d = 30 (the data's law) and 1000 (the initialization's law)
TINY = dict(
    num_seeds=2,
    n=200,
    m=8,
    dims=[30, 1000],
    d_right=1000,
    init_scales=[1.0, 0.25],
    steps=6,
    records=6,
    n_test=2000,
    left_scale=0.02,
    left_lr=0.01,
    right_lr=0.16,
)


@pytest.fixture(scope="module")
def tiny():
    P = chapter.SPEC.params("smoke", **TINY)
    return P, chapter.compute(P), chapter.configs(P)


# --- parameters ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, value",
    [
        ("n", 1),
        ("gamma", 0.0),
        ("beta", 0.5),
        ("dims", [200, 50]),
        ("init_scales", [0.5, 0.1]),  # must contain 1.0
        ("init_scales", [1.0, 1.0]),  # no repeat
        ("right_lr", -0.1),
        ("dtype", "float16"),
    ],
)
def test_bad_parameter_is_named(name, value):
    with pytest.raises(ParameterError, match=name):
        chapter.SPEC.params("smoke", **{name: value})


def test_profiles_validate():
    for profile in ("smoke", "book", "paper"):
        P = chapter.SPEC.params(profile)
        assert 1.0 in P.init_scales and P.right_lr == 0.16 and P.left_lr == 0.01


# --- the setup, recomputed ---------------------------------------------------------------------


def _phi(z, gamma):
    """The smoothed leaky ReLU, gamma z + (1 - gamma) log((1 + e^z) / 2)."""
    return gamma * z + (1 - gamma) * (np.logaddexp(0.0, z) - math.log(2.0))


def _dphi(z, gamma):
    return gamma + (1 - gamma) / (1 + np.exp(-z))


def _signs(m):
    """a_j = +1/sqrt(m) for the first m - m // 2 neurons, -1/sqrt(m) for the others."""
    a = np.full(m, 1 / math.sqrt(m))
    a[m - m // 2 :] *= -1
    return a


def _f(W, X, gamma):
    return _phi(X @ W.T, gamma) @ _signs(W.shape[0])


def _logistic(W, X, y, gamma):
    return float(np.mean(np.logaddexp(0.0, -y * _f(W, X, gamma))))


def _gd(W, X, y, gamma, lr, steps):
    """Full-batch gradient descent on the logistic loss, written out: the gradient of
    (1/n) sum_i log(1 + exp(-y_i f(x_i))) is (1/n) sum_i -y_i sigmoid(-y_i f_i) a_j phi'(w_j.x_i)
    x_i. Returns the weights at every step 0..steps."""
    a, out = _signs(W.shape[0]), [W]
    for _ in range(steps):
        Z = X @ W.T
        g = -y / (1 + np.exp(y * (_phi(Z, gamma) @ a)))  # dl/df per point
        W = W - lr * ((g[:, None] * _dphi(Z, gamma) * a[None, :]).T @ X) / len(y)
        out.append(W)
    return out


def _stable_rank(W):
    s = np.linalg.svd(W, compute_uv=False)
    return float((s**2).sum() / s[0] ** 2)


def test_data_law_and_shared_mean(tiny):
    """Train and test come from one mixture: the same mean direction (estimated from each set
    by mean(y x), its norm d^beta), N(0, I) noise, balanced labels."""
    P, _, cf = tiny
    d = P.dims[0]
    for k in range(P.num_seeds):
        train, test, _, _ = chapter.initial_state(cf.left[0][k])
        est = [np.mean(s.y[:, None] * s.X, axis=0) for s in (train, test)]
        cos = est[0] @ est[1] / np.linalg.norm(est[0]) / np.linalg.norm(est[1])
        assert cos > 0.8, f"train and test means point apart (cos {cos:.2f}): two mixtures"
        # ||mean(y x)||^2 - d / n_test estimates ||mu||^2 without bias
        mu2 = est[1] @ est[1] - d / P.n_test
        assert mu2 == pytest.approx(d ** (2 * P.beta), rel=0.15)
        z = test.X - test.y[:, None] * est[1][None, :]
        assert z.var() == pytest.approx(1.0, rel=0.05)
        assert abs(np.mean(test.y == 1) - 0.5) < 3 * 0.5 / math.sqrt(P.n_test)
        assert set(np.unique(train.y)) == {-1.0, 1.0} and train.X.shape == (P.n, d)


def test_initialization_is_glorot_std_times_scale(tiny):
    """w_j ~ N(0, sigma^2 I_d), sigma = scale x the standard deviation of Glorot uniform
    U(-r, r), r = sqrt(6 / (d + m)) (its std is r / sqrt(3)); at every scale, from one shared
    direction per seed."""
    P, R, cf = tiny
    d, m = 1000, P.m
    i = R.gi(d)
    glorot = math.sqrt(6 / (d + m)) / math.sqrt(3)
    for k in range(P.num_seeds):
        Ws = [chapter.initial_state(cf.grid[i][j][k])[3].numpy() for j in range(len(R.scales))]
        for sc, W in zip(R.scales, Ws, strict=True):
            assert W.shape == (m, d)
            assert W.std() == pytest.approx(sc * glorot, rel=0.05)
            assert abs(W.mean()) < 4 * sc * glorot / math.sqrt(W.size)
            kurt = np.mean(W**4) / np.mean(W**2) ** 2
            assert kurt == pytest.approx(3.0, abs=0.4), "not Gaussian"
        assert np.allclose(Ws[0] / R.scales[0], Ws[1] / R.scales[1], rtol=1e-12)
    left = chapter.initial_state(cf.left[1][0])[3].numpy()
    assert left.std() == pytest.approx(P.left_scale * glorot, rel=0.05)


@pytest.mark.parametrize("panel", ["left", "grid"])
def test_runs_are_gradient_descent_on_the_logistic_loss(tiny, panel):
    """The recorded loss, stable rank and final test accuracy of the runs equal those of
    gradient descent written out in NumPy, with the panel's step size, from the run's own
    initial weights and data."""
    P, R, cf = tiny
    assert R.steps[0] == 0 and R.steps[-1] == P.steps and len(R.steps) <= P.records + 2
    for i, d in enumerate(P.dims):
        for k in range(P.num_seeds):
            if panel == "left":
                cfg, lr = cf.left[i][k], P.left_lr
                loss, sr = R.left_loss[i, k], R.left_stable_rank[i, k]
                rel_min, acc = R.left_relative_min[i, k], None
            else:
                j = len(R.scales) - 1
                g = R.gi(d)
                cfg, lr = cf.grid[g][j][k], P.right_lr
                loss, sr = R.grid_loss[g, j, k], R.grid_stable_rank[g, j, k]
                rel_min, acc = R.grid_relative_min[g, j, k], R.grid_test_accuracy[g, j, k]
            train, test, _, W0 = chapter.initial_state(cfg)
            Ws = _gd(W0.numpy(), train.X, train.y, P.gamma, lr, P.steps)
            ref_loss = [_logistic(Ws[t], train.X, train.y, P.gamma) for t in R.steps]
            np.testing.assert_allclose(loss, ref_loss, rtol=1e-9)
            ref_sr = np.array([_stable_rank(Ws[t]) for t in R.steps])
            np.testing.assert_allclose(sr, ref_sr, rtol=1e-8)
            assert rel_min == pytest.approx((ref_sr / ref_sr[0]).min(), rel=1e-8)
            if acc is not None:
                pred = np.sign(_f(Ws[-1], test.X, P.gamma))
                assert acc == pytest.approx(np.mean(pred == test.y), abs=1e-12)


def test_loss_is_not_the_exponential_loss(tiny):
    """At a small initialization f is near 0: the logistic loss starts near log 2, the
    exponential near 1."""
    _, R, _ = tiny
    assert np.allclose(R.left_loss[:, :, 0], math.log(2), atol=0.02)


def test_number_of_runs(tiny):
    P, R, cf = tiny
    D, G, S, K = len(P.dims), len(R.grid_dims), len(R.scales), P.num_seeds
    assert R.left_stable_rank.shape == (D, K, len(R.steps))
    assert R.grid_stable_rank.shape == (G, S, K, len(R.steps))
    assert R.configs_total == K * (D + G * S) == len(cf.unique)  # left_scale is not a grid scale
    assert R.configs_computed == R.configs_total and R.store_dir is None
    assert len(set(R.run_seeds)) == K
    assert sorted(R.scales, reverse=True) == R.scales and R.grid_dims == sorted({30, 1000})


def test_step_sizes_and_lengths_in_configs(tiny):
    P, R, cf = tiny
    for row in cf.left:
        assert {(c["lr"], c["init_scale"], c["steps"]) for c in row} == {
            (P.left_lr, P.left_scale, P.steps)
        }
    for by_scale in cf.grid:
        for sc, row in zip(R.scales, by_scale, strict=True):
            assert {(c["lr"], c["init_scale"]) for c in row} == {(P.right_lr, sc)}


# --- the hypotheses ----------------------------------------------------------------------------


def test_glorot_reversal_applies_only_at_step_0_16():
    P = chapter.SPEC.params("book")
    assert chapter.hyp_right_step_paper(P).holds
    P01 = chapter.SPEC.params("book", right_lr=0.01)
    assert not chapter.hyp_right_step_paper(P01).holds


def test_init_vs_steps_needs_training_by_a_tenth_of_the_run():
    """Section 5's remark is checked where the grid's step times the recorded step at T/10 is
    at least the smoke profile's 0.16 x 3; at step 0.01 it is not applicable (the run goes on)."""
    from failing_cases.paper_a_figure1 import planted

    P = chapter.SPEC.params("smoke")
    R = planted(P)
    assert chapter.short_training_time(P, R) >= chapter.MIN_SHORT_TIME
    assert chapter.hyp_short_training(P, R).holds
    P01 = chapter.SPEC.params("smoke", right_lr=0.01)
    assert not chapter.hyp_short_training(P01, R).holds
    assert chapter.init_scale_beats_training_longer(P01, R).evaluate().passed is None


def test_left_resolution_gate_reads_the_spread_not_the_sign():
    """The gate holds for narrow intervals of either sign and fails for wide ones."""
    P = chapter.SPEC.params("smoke")
    for slopes, holds in (([-0.15, -0.15, -0.16], True), ([0.15, 0.15, 0.16], True),
                          ([-0.25, -0.11, -0.11], False)):  # fmt: skip
        R = _planted_left(P, slopes)
        assert chapter.hyp_left_slope_resolved(P, R).holds is holds


def _planted_left(P, slopes):
    """A Result whose left-panel relative minima follow d^slope, one slope per run."""
    from failing_cases.paper_a_figure1 import planted

    return planted(P, left_slopes=slopes)


def test_planted_default_passes_every_check():
    """The failing cases' planted Result passes every check when nothing is planted against
    it: each case fails because of what it plants, not because of the scaffold."""
    from failing_cases.paper_a_figure1 import planted

    for profile in ("smoke", "book"):
        P = chapter.SPEC.params(profile)
        R = planted(P)
        for claim in chapter.claims(P, R):
            assert claim.outcome() is not False, claim.name
        if profile == "book":
            assert all(c.outcome() for c in chapter.claims(P, R)), [
                c.name for c in chapter.claims(P, R) if not c.outcome()
            ]


def test_plug_in_accuracy_is_the_mean_difference_classifier_by_monte_carlo():
    """``Phi(d^(2 beta) / sqrt(d^(2 beta) + d / n))`` against the plug-in classifier itself:
    ``w`` the mean of ``y_i x_i`` over ``n`` draws of the mixture, its exact accuracy on the
    mixture ``Phi(<w, mu> / ||w||)`` averaged over 400 training sets (the first-order formula
    drops the fluctuation of ``<w, mu>``: it agrees to 0.01)."""
    from scipy.stats import norm

    rng = np.random.default_rng(5)
    for n, d, beta in ((100, 300, 0.1), (100, 3000, 0.1), (20, 1000, 0.2)):
        mu = np.zeros(d)
        mu[0] = d**beta
        accs = []
        for _ in range(400):
            y = rng.choice([-1.0, 1.0], size=n)
            X = y[:, None] * mu + rng.standard_normal((n, d))
            w = (y[:, None] * X).mean(0)
            accs.append(norm.cdf(w @ mu / np.linalg.norm(w)))
        assert abs(np.mean(accs) - chapter.plug_in_accuracy(n, d, beta)) < 0.01, (n, d, beta)


def test_the_fall_of_accuracy_is_checked_only_where_the_plug_in_classifier_predicts_it():
    """At the book profile (beta = 0.1, n = 100, d from 100 to 3000) the plug-in accuracy
    falls from about 0.91 to 0.80; at beta = 0.2 it rises (0.990 to 0.9996), and the check
    is not applicable there, where the robustness harness found the networks' accuracy rising
    too (lower end -0.014)."""
    from failing_cases.paper_a_figure1 import planted

    P = chapter.SPEC.params("book")
    h = chapter.hyp_predicted_fall(P)
    assert h.holds and 0.10 < h.value < 0.12
    P2 = chapter.SPEC.params("book", beta=0.2)
    assert not chapter.hyp_predicted_fall(P2).holds
    rising = planted(P2, acc_fall=-0.01)
    assert chapter.accuracy_falls_with_d(P2, rising).evaluate().passed is None
    assert chapter.accuracy_falls_with_d(P, planted(P, acc_fall=-0.01)).evaluate().passed is False


def test_accuracy_cost_is_judged_against_the_test_sets_95_percent_margin_of_error():
    """The margin of ``small_init_accuracy_not_worse`` is 1.96 binomial standard errors of one
    test accuracy: at accuracy 0.85 on 1,000 points, 1.96 sqrt(0.85 0.15 / 1000) = 0.0221. The
    planted differences are the same in every run (an interval of width 0): -0.015 passes
    (one standard error, 0.0113, would have failed it) and -0.03 fails."""
    from failing_cases.paper_a_figure1 import planted

    P = chapter.SPEC.params("book")
    assert P.n_test == 1000
    ok = chapter.small_init_accuracy_not_worse(P, planted(P, acc_small_minus_glorot=-0.015))
    assert ok.evaluate().passed is True
    bad = chapter.small_init_accuracy_not_worse(P, planted(P, acc_small_minus_glorot=-0.03))
    assert bad.evaluate().passed is False
    # with the same accuracy 0.854 at every d (no fall): margin 1.96 sqrt(0.854 0.146 / 1000)
    for diff, passed in ((-0.0218, True), (-0.0220, False)):
        R = planted(P, acc_small_minus_glorot=diff, acc_fall=0.0)
        assert chapter.small_init_accuracy_not_worse(P, R).evaluate().passed is passed, diff
