"""Failing cases of the chapter paper_b/hermite: for each theorem and observation check, an
input where its statement is false, checked by the chapter module's own function."""

from __future__ import annotations

import functools
import math
from dataclasses import replace

import numpy as np

from failing_cases import Case
from twolayer.core import stats
from twolayer.paper_b import hermite
from twolayer.paper_b import population as pop
from twolayer.paper_b.chapters import hermite as ch

CHAPTER = "paper_b/hermite"


@functools.cache
def _P():
    return ch.SPEC.params("smoke", mc_samples=20_000)


@functools.cache
def _coefficients():
    return ch.coefficients(_P())


@functools.cache
def _decay():
    return ch.decay(_P())


@functools.cache
def _kernel():
    return ch.kernel(_P())


@functools.cache
def _second_order():
    return ch.second_order(_P())


@functools.cache
def _claim_b1():
    return ch.claim_b1(_P(), _second_order().teacher)


@functools.cache
def _appendix_i():
    return ch.appendix_i(ch.SPEC.params("smoke", ks_i1=[10, 100], betas_i2=[0.5, 0.99]))


def _series(coef, t, start=0):
    """``sum_{start <= k} coef_k^2 t^k``, for planted coefficients."""
    ks = np.arange(len(coef))
    return (np.asarray(coef)[start:, None] ** 2 * t[None, :] ** ks[start:, None]).sum(0)


def _wrong_sign():
    """Lemma A.1's closed form with the sign (-1)^(k/2) instead of (-1)^(k/2-1)."""
    c = _coefficients()
    closed = c.closed.copy()
    closed[2::2] *= -1
    return replace(c, closed=closed)


def _smooth_gauss_hermite():
    """Gauss-Hermite on a smooth function (e^(x/2), exact coefficients e^(1/8) 2^-k /
    sqrt(k!)): it converges exponentially, not algebraically."""
    exact = np.array([math.exp(1 / 8) * 0.5**k / math.sqrt(math.factorial(k)) for k in range(9)])
    nodes = [10, 40, 150]
    err = [
        float(
            np.abs(hermite.coefficients_gauss_hermite(lambda x: np.exp(x / 2), 8, n) - exact).max()
        )
        for n in nodes
    ]
    return replace(_coefficients(), gh_nodes=nodes, gh_err=err)


def _step_decay():
    """Coefficients decaying like k^(-3/4) (those of a step function), fitted as the page does."""
    d = _decay()
    coef = d.coef * d.ks**0.5
    sel = d.ks >= d.k_fit_min
    return replace(d, coef=coef, slope=stats.fit_slope(d.ks[sel], coef[sel]))


def _kernel_with(coef=None, *, start=0):
    """The page's kernel step with the series built from planted coefficients."""
    k = _kernel()
    s = _series(coef, k.t, start)
    return replace(k, series=s) if start == 0 else replace(k, series2=s)


def _missing_order_two():
    c = hermite.relu_coefficients(_kernel().K)
    c[2] = 0.0
    return c


def _sigma4_off_by_factor():
    c = hermite.relu_coefficients(_kernel().K)
    c[4] *= 1.5
    return c


def _claim_b1_unit_neurons():
    """Claim B.1 for a student whose neurons have unit norm: there the printed form holds."""
    P, tch = _P(), _second_order().teacher
    s = ch.claim_b1_student(P)
    unit = pop.Net(s.a, s.W / np.linalg.norm(s.W, axis=1, keepdims=True), s.alpha, s.beta)
    return ch.claim_b1(P, tch, unit)


CASES = {
    "lemma_a1_closed_form_matches_quadrature": Case(
        "a closed form with the sign (-1)^(k/2): every even coefficient flips sign",
        lambda: ch.lemma_a1_closed_form_matches_quadrature(_P(), _wrong_sign()),
    ),
    "relu_first_coefficients": Case(
        "the quadrature of a leaky ReLU (slope 0.1 on x < 0): sigma_1 = 0.55, not 1/2",
        lambda: ch.relu_first_coefficients(
            _P(),
            replace(
                _coefficients(),
                exact_quad=hermite.piecewise_linear_coefficients(_P().k_max, 1.0, 0.1),
            ),
        ),
    ),
    "abs_coefficients_twice_relu": Case(
        "the quadrature of x on x > 0, -x/2 on x < 0 is not twice ReLU's even coefficients",
        lambda: ch.abs_coefficients_twice_relu(
            _P(),
            replace(
                _coefficients(),
                abs_quad=hermite.piecewise_linear_coefficients(_P().k_max, 1.0, -0.5),
            ),
        ),
    ),
    "gauss_hermite_error_rate": Case(
        "a smooth integrand (e^(x/2)): Gauss-Hermite converges exponentially",
        lambda: ch.gauss_hermite_error_rate(_P(), _smooth_gauss_hermite()),
    ),
    "constant_C_with_one_over_k_correction": Case(
        "|sigma_k| without the factor k/(k-1): k^(5/4)|sigma_k|/C - 1 < 0",
        lambda: ch.constant_C_with_one_over_k_correction(
            _P(), replace(_decay(), coef=_decay().coef * (_decay().ks - 1) / _decay().ks)
        ),
    ),
    "slope_minus_five_quarters": Case(
        "coefficients decaying like k^(-3/4) (a step function's): slope -3/4",
        lambda: ch.slope_minus_five_quarters(_P(), _step_decay()),
    ),
    "claim_a1_correlated_hermite": Case(
        "moments of variables with correlation 0.31 held to rho = 0.3 (and so on)",
        lambda: ch.claim_a1_correlated_hermite(
            _P(),
            replace(
                _kernel(),
                moments=[hermite.correlated_moments(_kernel().k_a1, r + 0.01) for r in ch.RHOS_A1],
            ),
        ),
    ),
    "kernel_is_hermite_series": Case(
        "a series with sigma_4 1.5 times too large: the residual is negative",
        lambda: ch.kernel_is_hermite_series(_P(), _kernel_with(_sigma4_off_by_factor())),
    ),
    "kappa2_is_series_from_order_two": Case(
        "a series missing the order 2: the residual exceeds the tail bound",
        lambda: ch.kappa2_is_series_from_order_two(
            _P(), _kernel_with(_missing_order_two(), start=2)
        ),
    ),
    "second_order_projection": Case(
        "the projection predicted as sigma_2^2 v^T H v (a factor sigma_2 off)",
        lambda: ch.second_order_projection(
            _P(),
            replace(
                _second_order(),
                theory=_second_order().theory * hermite.relu_coefficient(2),
            ),
        ),
    ),
    "claim_b1_corrected_exact": Case(
        "the right-hand side with the printed f_{>=2} (norm-2 neurons): exceeds L by c^2",
        lambda: ch.claim_b1_corrected_exact(
            _P(),
            replace(
                _claim_b1(),
                terms={**_claim_b1().terms, "sum_corrected": _claim_b1().terms["sum_literal"]},
            ),
        ),
    ),
    "ge2_corrected_matches_mc": Case(
        "the sampled third term of the printed reading against the corrected closed form",
        lambda: ch.ge2_corrected_matches_mc(
            _P(), replace(_claim_b1(), cor_mc=_claim_b1().lit_mc, cor_se=_claim_b1().lit_se)
        ),
    ),
    "ge2_printed_matches_mc": Case(
        "the sampled third term of the corrected reading against the printed closed form",
        lambda: ch.ge2_printed_matches_mc(
            _P(), replace(_claim_b1(), lit_mc=_claim_b1().cor_mc, lit_se=_claim_b1().cor_se)
        ),
    ),
    "claim_b1_printed_gap_is_visible": Case(
        "a student with unit-norm neurons, where the printed form holds (gap 0)",
        lambda: ch.claim_b1_printed_gap_is_visible(_P(), _claim_b1_unit_neurons()),
    ),
    "lemma_i1_rate": Case(
        "maxima that decay like (k/2)^(-p/2): 2^(p/2) times the bound",
        lambda: ch.lemma_i1_rate(
            _P(),
            replace(
                _appendix_i(),
                i1_scaled=np.array(
                    [
                        k ** (p / 2) * hermite.lemma_i1_closed_form(k // 2, p)
                        for k, p in zip(_appendix_i().i1_k, _appendix_i().i1_p, strict=True)
                    ]
                ),
            ),
        ),
    ),
    "lemma_i2_corrected_max": Case(
        "the maximum of k^(1/2) (beta/2)^(k/2), which the printed proof differentiates",
        lambda: ch.lemma_i2_corrected_max(
            _P(),
            replace(
                _appendix_i(),
                i2_max=(math.e * np.log(2 / _appendix_i().betas)) ** -0.5,
            ),
        ),
    ),
    "lemma_i2_printed_bound_false": Case(
        "beta = 0.05 and 0.1, below 4^(-1/(e-2)), where the printed bound holds (gate forced)",
        lambda: ch.lemma_i2_printed_bound_false(
            _P(),
            replace(
                _appendix_i(),
                betas=np.array([0.05, 0.1]),
                i2_max=np.array([hermite.lemma_i2_max(b) for b in (0.05, 0.1)]),
                i2_printed=np.array([hermite.lemma_i2_printed(b) for b in (0.05, 0.1)]),
            ),
            applies=True,
        ),
    ),
    "lemma_i2_printed_holds_iff_small_beta": Case(
        "a crossing from a wrong derivation, 4^(-1/(e-1)) ~ 0.45 instead of 0.145",
        lambda: ch.lemma_i2_printed_holds_iff_small_beta(
            _P(), replace(_appendix_i(), crossing=4.0 ** (-1.0 / (math.e - 1.0)))
        ),
    ),
}
