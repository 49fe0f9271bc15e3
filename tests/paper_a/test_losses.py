"""Tests of twolayer.paper_a.losses: values by hand, stability at huge margins, g = -ell'; the
NumPy losses against the torch ones (values and derivatives)."""

from __future__ import annotations

import decimal
import math

import numpy as np
import pytest
import torch

from twolayer.paper_a import losses as Ls

F64 = torch.float64
EPS = torch.finfo(F64).eps


def t(values):
    return torch.tensor(values, dtype=F64)


# --- values by hand ------------------------------------------------------------------------------


def test_logistic_values_by_hand():
    q = t([0.0, 1.0, -1.0, 2.5])
    expected = t(
        [
            math.log(2.0),
            math.log(1 + math.exp(-1.0)),
            math.log(1 + math.e),
            math.log(1 + math.exp(-2.5)),
        ]
    )
    torch.testing.assert_close(Ls.logistic(q), expected, rtol=1e-15, atol=0)


def test_exp_values_by_hand():
    q = t([0.0, 1.0, -1.0, 2.5])
    expected = t([1.0, math.exp(-1.0), math.e, math.exp(-2.5)])
    torch.testing.assert_close(Ls.exponential(q), expected, rtol=1e-15, atol=0)


def test_logistic_accurate_for_moderately_negative_margins():
    qs = [-20.0, -5.0]
    expected = t([-q + math.log1p(math.exp(q)) for q in qs])
    torch.testing.assert_close(Ls.logistic(t(qs)), expected, rtol=1e-15, atol=0)


@pytest.mark.parametrize("which", ["logistic", "log_g"])
def test_logistic_accurate_beyond_softplus_threshold(which):
    if which == "logistic":
        q = -25.0
        got, expected = float(Ls.logistic(t([q]))), -q + math.log1p(math.exp(q))
    else:
        q = 25.0
        got, expected = float(Ls.logistic_log_g(t([q]))), -(q + math.log1p(math.exp(-q)))
    assert got == pytest.approx(expected, rel=1e-15, abs=0)


def test_logistic_at_huge_margins():
    # log(1 + e^{-q}) = e^{-q} (1 - e^{-q}/2 + ...): e^{-700} = 9.9e-305 is a normal float, and
    # the correction is far below its last bit; e^{-1e4} = 10^-4343 rounds to exactly 0
    assert float(Ls.logistic(t([700.0]))) == pytest.approx(math.exp(-700.0), rel=1e-15, abs=0)
    assert float(Ls.logistic(t([1e4]))) == 0.0
    neg = float(Ls.logistic(t([-1e4])))
    assert neg == pytest.approx(1e4, rel=1e-12)


@pytest.mark.parametrize("name", ["logistic", "exp"])
def test_g_is_minus_derivative_autograd(name):
    loss = Ls.get_loss(name)
    q = torch.linspace(-20, 40, 241, dtype=F64).requires_grad_(True)
    (d,) = torch.autograd.grad(loss(q).sum(), q)
    torch.testing.assert_close(loss.g(q.detach()), -d, rtol=1e-13, atol=0)
    assert torch.all(loss.g(q.detach()) > 0)


def test_g_by_hand():
    q = t([0.0, 2.0])
    torch.testing.assert_close(
        Ls.logistic_g(q), t([0.5, 1 / (1 + math.exp(2.0))]), rtol=1e-15, atol=0
    )
    torch.testing.assert_close(Ls.exponential_g(q), t([1.0, math.exp(-2.0)]), rtol=1e-15, atol=0)


@pytest.mark.parametrize("name", ["logistic", "exp"])
def test_log_g_and_log_ell_consistent(name):
    loss = Ls.get_loss(name)
    # |q| <= 20: see test_logistic_accurate_beyond_softplus_threshold
    q = torch.linspace(-20, 20, 81, dtype=F64)
    torch.testing.assert_close(loss.log_g(q), torch.log(loss.g(q)), rtol=1e-13, atol=1e-14)
    torch.testing.assert_close(loss.log_ell(q), torch.log(loss.ell(q)), rtol=1e-13, atol=1e-14)


def test_logistic_log_loss_across_the_branch_point():
    # log(log1p(e^{-q})) in Python floats is accurate for every q with e^{-q} a normal float
    qs = [-50.0, -1.0, 0.0, 10.0, 29.0, 29.999, 30.0, 30.001, 31.0, 60.0, 300.0, 700.0]
    got = Ls.logistic_log_loss(t(qs))
    expected = t([math.log(math.log1p(math.exp(-q))) for q in qs])
    torch.testing.assert_close(got, expected, rtol=1e-14, atol=0)
    # and far beyond underflow it is -q to first order
    assert float(Ls.logistic_log_loss(t([1e4]))) == -1e4


def _log_log1p_exp_neg(q: float) -> float:
    """``log(log(1 + e^{-q}))`` in 60-digit decimal arithmetic, rounded once to a float: an
    independent, correctly rounded reference (``e^{-q}`` keeps ~47 significant digits in
    ``1 + e^{-q}`` for ``q <= 31``)."""
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        return float((1 + (-decimal.Decimal(q)).exp()).ln().ln())


def test_numpy_logistic_log_loss_correctly_rounded_past_the_branch_point():
    """For ``q > 30`` the NumPy ``log ell`` is ``-q - e^{-q}/2``: the next term of
    ``log(e^{-q}(1 - e^{-q}/2 + ...))`` is ``O(e^{-2q}) < 1e-26``, far below half an ulp of
    ``q`` (1.8e-15), and ``e^{-q}/2`` enters one rounding, so the result is the correctly
    rounded value on all of ``(30, 31]`` (``log(softplus(-q))`` misses it by an ulp at some of
    these points). Far beyond underflow (``e^{-1e4} = 10^-4343``) it is exactly ``-q``, where
    ``softplus(-q)`` is 0 and its log ``-inf``."""
    q = np.linspace(30.0, 31.0, 1001)[1:]
    expected = np.array([_log_log1p_exp_neg(v) for v in q])
    np.testing.assert_array_equal(Ls.numpy_logistic_log_loss(q), expected)
    huge = np.array([800.0, 1e4])
    np.testing.assert_array_equal(Ls.numpy_logistic_log_loss(huge), -huge)


# --- empirical risk in log space ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["logistic", "exp"])
def test_log_empirical_risk_equals_log_mean_where_representable(name):
    loss = Ls.get_loss(name)
    q = t([[-2.0, 0.0, 1.5, 7.0], [0.1, 3.0, 20.0, 40.0]])
    L = loss.empirical_risk(q)
    assert L.shape == (2,)
    torch.testing.assert_close(L, loss(q).mean(dim=-1), rtol=0, atol=0)
    torch.testing.assert_close(loss.log_empirical_risk(q), torch.log(L), rtol=1e-13, atol=0)


@pytest.mark.parametrize("name", ["logistic", "exp"])
def test_log_empirical_risk_finite_where_mean_underflows(name):
    loss = Ls.get_loss(name)
    q = t([1e4, 1e4 + 1.0, 1e4 + 3.0])
    assert float(loss.empirical_risk(q)) == 0.0  # L underflows ...
    logL = float(loss.log_empirical_risk(q))  # ... log L does not
    # log L = -1e4 + log((1 + e^{-1} + e^{-3}) / 3) up to e^{-1e4} corrections
    expected = -1e4 + math.log((1 + math.exp(-1.0) + math.exp(-3.0)) / 3)
    assert math.isfinite(logL)
    assert logL == pytest.approx(expected, rel=1e-14)


# --- normalized weights g_i / (n L) ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["logistic", "exp"])
def test_normalized_weights_definition(name):
    loss = Ls.get_loss(name)
    q = t([[-2.0, 0.0, 1.5, 7.0], [0.1, 3.0, 20.0, 40.0]])
    n = q.shape[-1]
    L = loss.empirical_risk(q)
    w = loss.normalized_weights(q)
    assert w.shape == q.shape
    # w_i * n * L = g_i, hence sum_i w_i = sum_i g_i / (n L)
    torch.testing.assert_close(w * n * L.unsqueeze(-1), loss.g(q), rtol=1e-13, atol=0)
    torch.testing.assert_close(w.sum(-1), loss.g(q).sum(-1) / (n * L), rtol=1e-13, atol=0)


def test_normalized_weights_logistic_by_hand():
    q = t([0.0, 0.0])  # g = 1/2, L = log 2: w = (1/2) / (2 log 2)
    w = Ls.get_loss("logistic").normalized_weights(q)
    torch.testing.assert_close(
        w, torch.full((2,), 0.25 / math.log(2.0), dtype=F64), rtol=1e-15, atol=0
    )


@pytest.mark.parametrize("q", [[-3.0, 0.0, 2.0, 5.0], [1e4, 1e4 + 1.0, 1e4 + 2.0], [-700.0, 700.0]])
def test_exp_normalized_weights_sum_to_one_and_are_softmax(q):
    loss = Ls.get_loss("exp")
    qt = t(q)
    w = loss.normalized_weights(qt)
    assert torch.all(torch.isfinite(w))
    # w_i = exp(-q_i - logsumexp(-q)): the log-space subtraction of numbers of size |q| costs a
    # relative error of a few eps * max|q| in w (conditioning, not a bug)
    rtol = 4 * EPS * max(1.0, max(abs(v) for v in q))
    assert float(w.sum()) == pytest.approx(1.0, abs=rtol)
    # e^{-q_i} / sum_j e^{-q_j}
    torch.testing.assert_close(w, torch.softmax(-qt, dim=-1), rtol=rtol, atol=1e-300)


def test_logistic_normalized_weights_at_underflow():
    # for q -> inf, g ~ ell ~ e^{-q}, so the weights tend to softmax(-q) and sum to 1
    q = t([1e4, 1e4 + 1.0, 1e4 + 2.0])
    w = Ls.get_loss("logistic").normalized_weights(q)
    assert torch.all(torch.isfinite(w))
    # relative error e^{-1e4}/2 from the approximation, plus the log-space conditioning 4 eps |q|
    torch.testing.assert_close(w, torch.softmax(-q, dim=-1), rtol=4 * EPS * 1e4, atol=0)
    assert float(w.sum()) == pytest.approx(1.0, abs=4 * EPS * 1e4)


# --- registry -------------------------------------------------------------------------------------


def test_get_loss_names():
    assert Ls.get_loss("logistic").name == "logistic"
    assert Ls.get_loss("exp").name == "exp"
    assert Ls.get_loss("exp").ell is Ls.exponential


@pytest.mark.parametrize("name", ["exponential", "Logistic", "hinge", ""])
def test_get_loss_bad_name_raises(name):
    with pytest.raises(ValueError, match="loss must be one of"):
        Ls.get_loss(name)


# --- the NumPy losses (the NumPy loop of twolayer.paper_a.flow) -----------------------------------

NUMPY_PAIRS = [
    ("logistic", "ell", Ls.numpy_logistic, Ls.logistic),
    ("logistic", "g", Ls.numpy_logistic_g, Ls.logistic_g),
    ("logistic", "log_ell", Ls.numpy_logistic_log_loss, Ls.logistic_log_loss),
    ("logistic", "log_g", Ls.numpy_logistic_log_g, Ls.logistic_log_g),
    ("exp", "ell", Ls.numpy_exponential, Ls.exponential),
    ("exp", "g", Ls.numpy_exponential_g, Ls.exponential_g),
    ("exp", "log_ell", Ls.numpy_exponential_log, Ls.exponential_log),
    ("exp", "log_g", Ls.numpy_exponential_log, Ls.exponential_log),
]


def _random_margins(seed: int) -> np.ndarray:
    """Margins over every regime: moderate, around the logistic branch point 30, huge."""
    rng = np.random.default_rng(seed)
    return np.concatenate(
        [
            rng.uniform(-30, 30, 400),
            rng.uniform(29.0, 31.0, 100),
            rng.uniform(30, 700, 100),
            rng.normal(0, 3, (10, 10)).ravel(),
        ]
    )


@pytest.mark.parametrize(("name", "part", "np_fn", "torch_fn"), NUMPY_PAIRS)
def test_numpy_losses_agree_with_the_torch_ones(name, part, np_fn, torch_fn):
    q = _random_margins(7)
    got = np_fn(q)
    assert isinstance(got, np.ndarray) and got.dtype == np.float64 and got.shape == q.shape
    np.testing.assert_allclose(got, torch_fn(t(q)).numpy(), rtol=4 * EPS, atol=0)
    # the registry names the same functions as the torch one
    assert getattr(Ls.NUMPY_LOSSES[name], part) is np_fn
    assert Ls.NUMPY_LOSSES[name].name == Ls.get_loss(name).name


@pytest.mark.parametrize("name", ["logistic", "exp"])
def test_numpy_derivatives_agree_with_torch_autograd(name):
    """``g = -ell'`` and ``d log ell / dq = -g / ell``: the NumPy ``g`` and ``log g - log ell``
    against autograd of the torch ``ell`` and ``log ell``, and a central difference of the
    NumPy ``ell`` against the NumPy ``g``."""
    npl, loss = Ls.NUMPY_LOSSES[name], Ls.get_loss(name)
    q = _random_margins(11)
    q = q[np.abs(q) <= 40]  # where ell and g are normal floats of moderate size
    qt = t(q).requires_grad_(True)
    (d_ell,) = torch.autograd.grad(loss.ell(qt).sum(), qt)
    (d_log,) = torch.autograd.grad(loss.log_ell(qt).sum(), qt)
    np.testing.assert_allclose(npl.g(q), -d_ell.numpy(), rtol=1e-13, atol=0)
    np.testing.assert_allclose(
        -np.exp(npl.log_g(q) - npl.log_ell(q)), d_log.numpy(), rtol=1e-12, atol=0
    )
    h = 1e-5
    central = (npl.ell(q + h) - npl.ell(q - h)) / (2 * h)
    np.testing.assert_allclose(-central, npl.g(q), rtol=1e-7, atol=1e-20)


def test_torch_logistic_log_loss_correctly_rounded_past_the_branch_point():
    """The torch ``log ell`` switches to ``-q - e^{-q}/2`` for every ``q > 30`` as the NumPy one
    does (same reasoning as above): on ``(30, 31]`` it is the correctly rounded value of
    ``log(log(1 + e^{-q}))`` (a 60-digit decimal reference), where ``log(softplus(-q))`` is off
    by an ulp at some points (e.g. ``q = 30.05``: the switch must not move to 31)."""
    q = torch.linspace(30.0, 31.0, 1001, dtype=F64)[1:]
    expected = t([_log_log1p_exp_neg(float(v)) for v in q])
    assert torch.equal(Ls.logistic_log_loss(q), expected)
