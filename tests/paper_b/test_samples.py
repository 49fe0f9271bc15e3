"""Unit tests of twolayer.paper_b.samples (Algorithm 1 on n samples)."""

import numpy as np
import pytest
import torch

from helpers import fd_grad_regularized
from twolayer.paper_b import algorithm1 as alg
from twolayer.paper_b import features as feat
from twolayer.paper_b import population as pop
from twolayer.paper_b import samples as smp
from twolayer.paper_b import teacher as tmod


def _net(d=5, m=6, seed=0):
    rng = np.random.default_rng(seed)
    return pop.Net(rng.standard_normal(m), rng.standard_normal((m, d)), 0.3, rng.standard_normal(d))


def test_empirical_grad_matches_finite_differences():
    t = tmod.prototype(5, 0)
    net = _net()
    X, y = smp.draw(t, 300, 0)
    g = smp.empirical_grad(net, X, y, lam=0.1)
    v = net.flat()
    h = 1e-6

    def f(v):
        nn = pop.Net.unflat(v, 6, 5)
        return smp.empirical_loss(nn, X, y) + 0.05 * (nn.a @ nn.a + np.sum(nn.W**2))

    fd = np.array([(f(v + h * e) - f(v - h * e)) / (2 * h) for e in np.eye(len(v))])
    assert np.allclose(g.flat(), fd, rtol=1e-5, atol=1e-6)


def _autograd(net, X, y, lam):
    """The gradient of ``(1/n) sum (f - y)^2 + lam/2 (||a||^2 + ||W||^2)`` by PyTorch's autograd
    (whose ReLU has derivative 0 at 0)."""
    a, W, beta = (torch.tensor(v, requires_grad=True) for v in (net.a, net.W, net.beta))
    alpha = torch.tensor(net.alpha, dtype=torch.float64, requires_grad=True)
    Xt, yt = torch.as_tensor(X), torch.as_tensor(y)
    f = torch.relu(Xt @ W.T) @ a + alpha + Xt @ beta
    loss = ((f - yt) ** 2).mean() + lam / 2 * (a @ a + (W * W).sum())
    loss.backward()
    return pop.Net(a.grad.numpy(), W.grad.numpy(), float(alpha.grad), beta.grad.numpy())


def test_empirical_grad_default_and_the_kink():
    """Without ``lam`` there is no weight decay; at a kink (a neuron ``w_i = 0`` with
    ``a_i != 0``, and a point with ``w_i.x = 0`` exactly) the gradient takes ReLU's derivative
    at 0 as 0, like autograd."""
    t = tmod.prototype(5, 0)
    net = _net()
    X, y = smp.draw(t, 40, 1)
    net.W[2] = 0.0
    net.W[3] = [0.0, 1.5, 0.0, 0.0, 0.0]
    X[0] = [2.0, 0.0, 1.0, -1.0, 0.5]  # w_3.x_0 = 0
    g = smp.empirical_grad(net, X, y)
    np.testing.assert_allclose(g.flat(), _autograd(net, X, y, 0.0).flat(), rtol=1e-12, atol=1e-14)


def test_stage1_is_one_gradient_step_in_every_parameter():
    """Stage 1 moves ``a``, ``W``, ``alpha`` and ``beta`` by ``-eta0`` times the gradient of the
    regularized empirical loss (autograd), at the defaults ``eta0 = lam0 = 1`` and at others."""
    t = tmod.prototype(5, 0)
    net0 = _net(seed=2)
    X, y = smp.draw(t, 60, 2)
    for kw, eta0, lam0 in (({}, 1.0, 1.0), ({"eta0": 0.3, "lam0": 0.2}, 0.3, 0.2)):
        n1 = smp.stage1(net0, X, y, **kw)
        expected = net0.flat() - eta0 * _autograd(net0, X, y, lam0).flat()
        np.testing.assert_allclose(n1.flat(), expected, rtol=1e-12, atol=1e-14)


def test_empirical_gradient_converges_to_population():
    t = tmod.prototype(6, 1)
    net0 = alg.symmetric_init(6, 20, 1)
    e_small = smp.gradient_error(net0, t, *smp.draw(t, 500, 0))
    e_big = smp.gradient_error(net0, t, *smp.draw(t, 50_000, 0))
    assert e_big < e_small / 5  # sqrt(100) = 10 expected
    tr = smp.per_sample_trace(net0, t, 100_000, 0)
    assert e_big == pytest.approx(float(smp.predicted_error(net0, t, 50_000, tr)), rel=0.3)


def test_stage1_equals_minus_gradient_and_draw_deterministic():
    t = tmod.prototype(6, 0)
    net0 = alg.symmetric_init(6, 10, 0)
    X, y = smp.draw(t, 100, 3)
    X2, y2 = smp.draw(t, 100, 3)
    assert np.array_equal(X, X2) and np.array_equal(y, y2)
    n1 = smp.stage1(net0, X, y)
    assert np.allclose(n1.W, -smp.empirical_grad(net0, X, y, 0.0).W)


def test_stages_2_3_on_many_samples_learn():
    t = tmod.prototype(6, 0)
    net0 = alg.symmetric_init(6, 30, 0)
    X, y = smp.draw(t, 16 * 36, 0)
    n2 = smp.stage2(smp.stage1(net0, X, y), X, y, 0.02)
    assert np.allclose(np.abs(n2.a), np.linalg.norm(n2.W, axis=1))  # balanced
    n3 = smp.stage3(n2, X, y, 0.02, epochs=2, steps=200, eta=0.1)
    assert smp.empirical_loss(n3, X, y) < smp.empirical_loss(n2, X, y)
    assert pop.loss(n3, t) < 0.1 * t.target_norm2()


def test_gradient_study_follows_the_law_and_d_over_sqrt_n():
    st = smp.gradient_study([6, 12, 24], [1, 4], 3, 30, mc_n=20_000, seed=0)
    assert st["err"].shape == (3, 2, 3) and st["n"][2, 1] == 4 * 24 * 24
    r2 = smp.law_ratio(st)
    assert r2.size == 18 and abs(r2.mean() - 1) < 0.3
    est = smp.d_exponent(st, seed=0)
    assert abs(est.value - 1) < 0.4
    # a study whose error grew like d^1.7 / sqrt(n) (n ~ d^3.4) is told apart
    fake = dict(st, err=st["err"] * (np.asarray([6, 12, 24.0]) ** 0.7)[:, None, None])
    assert smp.d_exponent(fake, seed=0).value > 1.4


def test_per_sample_trace_standard_error():
    t = tmod.prototype(6, 0)
    net0 = alg.symmetric_init(6, 10, 0)
    tr, se = smp.per_sample_trace(net0, t, 20_000, 0, return_se=True)
    assert tr > 0 and 0 < se < 0.1 * tr
    assert smp.per_sample_trace(net0, t, 20_000, 0) == tr


def test_end_to_end_small_n_fails_large_n_learns():
    t = tmod.prototype(6, 0)
    net0 = alg.symmetric_init(6, 20, 0)
    ref = smp.population_run(t, net0, 0.02, 2, steps=150, eta=0.1)
    rows = smp.end_to_end(t, net0, [0.5, 16], 0.02, epochs=2, steps=150, eta=0.1, seed=0)
    assert rows[0]["population loss"] > 5 * ref["loss"]
    assert rows[0]["empirical loss"] < rows[0]["population loss"]
    assert rows[1]["population loss"] < 3 * ref["loss"]
    # the empirical Stage 1 covers the teachers worse with fewer samples (noisier step): the
    # coverage (worst teacher's nearest neuron) falls from n = d^2 / 2 to 16 d^2 to the exact
    # population step (n = infinity), computed here from the population Stage 1
    pop_cover = float(feat.angles(alg.stage1(net0, t), t).min(0).max())
    assert rows[0]["stage 1 coverage"] > rows[1]["stage 1 coverage"] > pop_cover
    assert ref["worst nearest angle"] < t.info["Delta"] / 4


def test_per_sample_trace_is_the_covariance_trace_not_the_second_moment():
    """``tr Sigma = E||g||^2 - ||E g||^2``, against per-sample gradients formed row by row
    (``g_i(x) = 2 (f(x) - y~) a_i 1{w_i.x > 0} x``) on the same draws (the function's own
    generator, ``default_rng([seed, 29])``), with the mean taken over the samples instead of the
    population gradient; at a network whose mean gradient is large (all rows on one direction),
    so that dropping ``||E g||^2`` moves the trace by far more than the tolerance."""
    from twolayer.core import seeds

    t = tmod.random_teacher(3, 2, 3, seeds.derive(0, "t"))
    net = pop.Net(np.full(4, 1.0), np.tile([3.0, 0.0, 0.0], (4, 1)))
    n = 20_000
    got = smp.per_sample_trace(net, t, n, seed=3)
    X = np.random.default_rng([3, 29]).standard_normal((n, 3))
    res = net(X) - t.y_tilde(X)
    gate = (X @ net.W.T > 0).astype(float)  # (n, m)
    g = 2 * res[:, None, None] * (net.a[None, :, None] * gate[:, :, None]) * X[:, None, :]
    mean = g.mean(axis=0)
    ours = (g * g).sum(axis=(1, 2)).mean() - float((mean * mean).sum())
    # the sample mean differs from E g by its standard error: ||m||^2 moves by about 2 ||m|| se
    se = float(np.sqrt((g.std(axis=0) ** 2).sum() / n))
    tol = 4 * 2 * float(np.linalg.norm(mean)) * se
    assert abs(got - ours) <= tol, (got, ours, tol)
    assert float((mean * mean).sum()) > 5 * tol  # the case can tell the two formulas apart


def _small_case():
    """A teacher in ``R^3``, a student with a dead neuron (``w_1 = 0``, ``a_1 != 0``) and
    small second-layer weights, so the per-sample squared norms have variance below 1."""
    from twolayer.core import seeds

    t = tmod.random_teacher(3, 2, 3, seeds.derive(1, "t"))
    rng = np.random.default_rng(4)
    W = rng.standard_normal((4, 3))
    W[1] = 0.0
    net = pop.Net(np.array([0.1, 0.15, -0.125, 0.075]), W, 0.1, np.zeros(3))
    return t, net


def test_per_sample_trace_against_single_sample_gradients():
    """On ``n = 10`` draws split into batches of 4, 4 and 2: the trace is
    ``mean ||g_j||^2 - ||grad_W L||^2`` and the standard error ``std(||g_j||^2) / sqrt(n)``,
    with ``g_j`` the W-gradient of the one-sample loss ``(f(x_j) - y~_j)^2`` (``empirical_grad``
    on that sample alone, which takes ReLU's derivative at 0 as 0, so the dead neuron adds
    nothing). The draws are the function's stream, ``default_rng([seed, 29])``, read in one
    piece (NumPy's Gaussian fills element by element, so the split does not change them)."""
    t, net = _small_case()
    n = 10
    X = np.random.default_rng([7, 29]).standard_normal((n, 3))
    sq = np.array(
        [
            np.sum(smp.empirical_grad(net, X[j : j + 1], t.y_tilde(X[j : j + 1])).W ** 2)
            for j in range(n)
        ]
    )
    G2 = float(np.sum(pop.grad(net, t, 0.0).W ** 2))
    assert np.var(sq) < 0.5  # below 1: a floor of 1 on the variance would show
    for batch in (4, 10, 20_000):
        tr, se = smp.per_sample_trace(net, t, n, 7, batch=batch, return_se=True)
        assert tr == pytest.approx(sq.mean() - G2, rel=1e-12, abs=1e-15)
        assert se == pytest.approx(np.std(sq) / np.sqrt(n), rel=1e-10)
    assert smp.per_sample_trace(net, t, n, 7) == pytest.approx(sq.mean() - G2, rel=1e-12)


def test_predicted_error_is_the_law_in_double_precision():
    """``sqrt(tr / n) / ||grad_W L||_F`` with the population gradient of the unregularized loss,
    here by central differences of :func:`population.loss` in ``W``; a count given as float32
    (from a table) is still divided in float64, and an array of counts gives one value each."""
    t, net = _small_case()
    fd = pop.Net.unflat(fd_grad_regularized(net, t, 0.0), *net.W.shape).W
    norm = float(np.linalg.norm(fd))
    trace = 0.123456789012345
    got = smp.predicted_error(net, t, np.float32(1000), trace)
    assert got == pytest.approx(np.sqrt(trace / 1000.0) / norm, rel=1e-8)
    exact = smp.predicted_error(net, t, np.float32(1000), trace) / smp.predicted_error(
        net, t, 1000, trace
    )
    assert exact == 1.0
    many = smp.predicted_error(net, t, [10, 1000], trace)
    np.testing.assert_allclose(many, np.sqrt(trace / np.array([10.0, 1000.0])) / norm, rtol=1e-8)
