"""Tests of twolayer.paper_a.activations: values by hand, Definition 4.1's constants,
derivatives."""

from __future__ import annotations

import math

import pytest
import torch

from twolayer.paper_a import activations as A

F64 = torch.float64
GAMMAS = [0.01, 0.1, 0.3, 0.5, 0.9, 1.0]


def t(values):
    return torch.tensor(values, dtype=F64)


# --- leaky ReLU -----------------------------------------------------------------------------


def test_leaky_relu_values_by_hand():
    z = t([-2.0, -0.5, 0.0, 0.25, 3.0])
    # max(gamma z, z) with gamma = 0.1
    expected = t([-0.2, -0.05, 0.0, 0.25, 3.0])
    assert torch.equal(A.leaky_relu(z, 0.1), expected)


def test_leaky_relu_is_max_of_gamma_z_and_z():
    z = torch.linspace(-5, 5, 101, dtype=F64)
    for g in GAMMAS:
        assert torch.equal(A.leaky_relu(z, g), torch.maximum(g * z, z))


def test_leaky_relu_gamma_one_is_identity():
    z = torch.linspace(-5, 5, 11, dtype=F64)
    assert torch.equal(A.leaky_relu(z, 1.0), z)
    assert torch.equal(A.leaky_relu_grad(z, 1.0), torch.ones_like(z))


def test_leaky_relu_derivative_by_hand():
    z = t([-2.0, -1e-9, 0.0, 1e-9, 3.0])
    # gamma below 0, 1 above, 1 at the kink (documented convention)
    assert torch.equal(A.leaky_relu_grad(z, 0.2), t([0.2, 0.2, 1.0, 1.0, 1.0]))
    assert torch.equal(A.leaky_relu_hess(z, 0.2), torch.zeros(5, dtype=F64))


def test_leaky_relu_derivative_matches_autograd_away_from_kink():
    z = t([-3.0, -1.0, -0.1, 0.1, 2.0]).requires_grad_(True)
    A.leaky_relu(z, 0.3).sum().backward()
    assert torch.equal(z.grad, A.leaky_relu_grad(z.detach(), 0.3))


def test_leaky_relu_kink_convention_matches_autograd():
    z = t([0.0]).requires_grad_(True)
    A.leaky_relu(z, 0.3).sum().backward()
    assert float(z.grad) == float(A.leaky_relu_grad(z.detach(), 0.3))


# --- smoothed leaky ReLU ----------------------------------------------------------------------


@pytest.mark.parametrize("gamma", GAMMAS)
def test_smoothed_value_by_hand(gamma):
    for z in [-3.0, -0.5, 0.7, 4.0]:
        expected = gamma * z + (1 - gamma) * math.log((1 + math.exp(z)) / 2)
        got = float(A.smoothed_leaky_relu(t([z]), gamma))
        assert got == pytest.approx(expected, rel=1e-14, abs=1e-15)


def _smoothed_exact(z: float, gamma: float) -> float:
    # log((1 + e^z)/2) = max(z, 0) + log1p(e^{-|z|}) - log 2, accurate in Python floats
    return gamma * z + (1 - gamma) * (max(z, 0.0) + math.log1p(math.exp(-abs(z))) - math.log(2.0))


@pytest.mark.parametrize("gamma", [0.1, 0.5])
def test_smoothed_value_accurate_up_to_softplus_threshold(gamma):
    zs = [-700.0, -50.0, -20.0, -1.0, 0.3, 5.0, 19.5, 20.0]
    got = A.smoothed_leaky_relu(t(zs), gamma)
    torch.testing.assert_close(
        got, t([_smoothed_exact(z, gamma) for z in zs]), rtol=1e-14, atol=1e-15
    )


def test_smoothed_value_accurate_beyond_softplus_threshold():
    zs = [20.1, 25.0, 30.0]
    got = A.smoothed_leaky_relu(t(zs), 0.5)
    torch.testing.assert_close(
        got, t([_smoothed_exact(z, 0.5) for z in zs]), rtol=1e-14, atol=1e-15
    )


@pytest.mark.parametrize("gamma", GAMMAS)
def test_smoothed_phi_zero_is_zero(gamma):
    assert abs(float(A.smoothed_leaky_relu(t([0.0]), gamma))) <= 1e-15


@pytest.mark.parametrize("gamma", GAMMAS)
def test_smoothed_derivative_bounds_on_wide_grid(gamma):
    z = torch.cat(
        [torch.linspace(-1e4, 1e4, 20001, dtype=F64), torch.linspace(-50, 50, 10001, dtype=F64)]
    )
    d1 = A.smoothed_leaky_relu_grad(z, gamma)
    assert torch.all(d1 >= gamma) and torch.all(d1 <= 1.0)
    d2 = A.smoothed_leaky_relu_hess(z, gamma)
    bound = (1 - gamma) / 4
    assert torch.all(d2.abs() <= bound)
    # the bound is attained at z = 0 (sigmoid(0) = 1/2)
    assert float(A.smoothed_leaky_relu_hess(t([0.0]), gamma)) == pytest.approx(bound, abs=1e-16)


@pytest.mark.parametrize("gamma", [0.1, 0.5, 0.9])
def test_smoothed_derivatives_match_autograd(gamma):
    # |z| < 20: from 20 on, torch's softplus switches to its float32-oriented linear branch
    # (see test_smoothed_value_accurate_beyond_softplus_threshold)
    z = torch.linspace(-19, 19, 381, dtype=F64).requires_grad_(True)
    (d1,) = torch.autograd.grad(A.smoothed_leaky_relu(z, gamma).sum(), z, create_graph=True)
    (d2,) = torch.autograd.grad(d1.sum(), z)
    zd = z.detach()
    torch.testing.assert_close(
        d1.detach(), A.smoothed_leaky_relu_grad(zd, gamma), rtol=1e-13, atol=1e-15
    )
    torch.testing.assert_close(d2, A.smoothed_leaky_relu_hess(zd, gamma), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("gamma", [0.1, 0.5, 0.9])
def test_smoothed_derivatives_match_finite_differences(gamma):
    z = torch.linspace(-8, 8, 161, dtype=F64)
    h = 1e-5
    # central differences: truncation h^2/6 * max|phi'''| < 1e-10, rounding ~ eps * max|phi| / h
    # < 1e-9 (|phi| <= 8 here), so 1e-8 is a derived, not tuned, tolerance
    fd1 = (A.smoothed_leaky_relu(z + h, gamma) - A.smoothed_leaky_relu(z - h, gamma)) / (2 * h)
    fd2 = (A.smoothed_leaky_relu_grad(z + h, gamma) - A.smoothed_leaky_relu_grad(z - h, gamma)) / (
        2 * h
    )
    torch.testing.assert_close(fd1, A.smoothed_leaky_relu_grad(z, gamma), rtol=0, atol=1e-8)
    torch.testing.assert_close(fd2, A.smoothed_leaky_relu_hess(z, gamma), rtol=0, atol=1e-8)


@pytest.mark.parametrize("gamma", [0.1, 0.5])
def test_smoothed_no_overflow_at_huge_inputs(gamma):
    z = t([-1e4, 1e4])
    phi = A.smoothed_leaky_relu(z, gamma)
    d1 = A.smoothed_leaky_relu_grad(z, gamma)
    d2 = A.smoothed_leaky_relu_hess(z, gamma)
    for v in (phi, d1, d2):
        assert torch.all(torch.isfinite(v))
    # asymptotics: phi(z) -> z - (1-gamma) log 2 for z -> +inf, gamma z - (1-gamma) log 2 for -inf
    log2 = math.log(2.0)
    assert float(phi[1]) == pytest.approx(1e4 - (1 - gamma) * log2, rel=1e-15)
    assert float(phi[0]) == pytest.approx(-gamma * 1e4 - (1 - gamma) * log2, rel=1e-15)
    assert float(d1[0]) == pytest.approx(gamma, abs=1e-15)
    assert float(d1[1]) == pytest.approx(1.0, abs=1e-15)
    assert torch.all(d2 == 0)


def test_smoothed_gamma_one_is_identity():
    z = torch.linspace(-10, 10, 21, dtype=F64)
    assert torch.equal(A.smoothed_leaky_relu(z, 1.0), z)


# --- gamma validation and the registry ----------------------------------------------------------

BAD_GAMMAS = [0.0, -0.1, 1.0000001, 2.0, float("nan"), float("inf")]


@pytest.mark.parametrize("gamma", BAD_GAMMAS)
@pytest.mark.parametrize(
    "fn",
    [
        A.leaky_relu,
        A.leaky_relu_grad,
        A.leaky_relu_hess,
        A.smoothed_leaky_relu,
        A.smoothed_leaky_relu_grad,
        A.smoothed_leaky_relu_hess,
    ],
)
def test_gamma_outside_unit_interval_raises(fn, gamma):
    with pytest.raises(ValueError, match="gamma"):
        fn(t([1.0]), gamma)


@pytest.mark.parametrize("gamma", BAD_GAMMAS)
@pytest.mark.parametrize("name", ["leaky_relu", "smoothed_leaky_relu"])
def test_get_activation_bad_gamma_raises(name, gamma):
    with pytest.raises(ValueError, match="gamma"):
        A.get_activation(name, gamma)


def test_get_activation_names_and_constants():
    lr = A.get_activation("leaky_relu", 0.2)
    assert (lr.name, lr.gamma, lr.H, lr.homogeneous) == ("leaky_relu", 0.2, 0.0, True)
    sm = A.get_activation("smoothed_leaky_relu", 0.2)
    assert (sm.name, sm.gamma, sm.homogeneous) == ("smoothed_leaky_relu", 0.2, False)
    assert sm.H == pytest.approx(0.8 / 4)
    z = t([-1.0, 0.5])
    assert torch.equal(lr(z), A.leaky_relu(z, 0.2))
    assert torch.equal(lr.grad(z), A.leaky_relu_grad(z, 0.2))
    assert torch.equal(sm(z), A.smoothed_leaky_relu(z, 0.2))
    assert torch.equal(sm.grad(z), A.smoothed_leaky_relu_grad(z, 0.2))
    assert torch.equal(sm.hess(z), A.smoothed_leaky_relu_hess(z, 0.2))


@pytest.mark.parametrize("name", ["relu", "Leaky_ReLU", "", "smoothed"])
def test_get_activation_unknown_name_raises(name):
    with pytest.raises(ValueError, match="activation"):
        A.get_activation(name, 0.5)


def test_leaky_relu_activation_second_derivative_is_zero_off_the_kink():
    """``get_activation("leaky_relu")`` carries ``phi'' = 0``: on each side of the kink
    ``phi'`` is constant (``gamma`` or 1), so its central difference over ``z +- 1/8`` (points
    that stay on one side) is exactly 0."""
    phi = A.get_activation("leaky_relu", 0.3)
    z = t([-2.0, -0.5, 0.25, 3.0])
    h = 0.125
    difference = (phi.grad(z + h) - phi.grad(z - h)) / (2 * h)
    assert torch.equal(difference, torch.zeros(4, dtype=F64))
    assert torch.equal(phi.hess(z), difference)
