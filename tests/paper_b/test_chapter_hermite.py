"""The chapter module of "Hermite view of ReLU" (``twolayer.paper_b.chapters.hermite``): its
parameters, what the page says about its setup (recomputed by independent routes), the kernel
checks' power against wrong series, and the page's statement boxes."""

from __future__ import annotations

import math
import re
from dataclasses import replace

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import comb

from helpers import ROOT
from twolayer.core.params import ParameterError
from twolayer.paper_b import hermite
from twolayer.paper_b.chapters import hermite as ch

PAGE = ROOT / "notebooks" / "paper_b" / "hermite.md"


def tiny(**kw):
    base = dict(k_max=12, k_fit_max=60, d=5, m=3, mc_samples=20_000, ks_i1=[2, 20])
    return ch.SPEC.params("smoke", **{**base, **kw})


# --- parameters -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, value",
    [
        ("k_max", 2),
        ("teacher", "planted"),
        ("r", 4),
        ("betas_i2", [0.5, 1.0]),
        ("gh_nodes", [10, 20]),  # spans less than a factor 4
        ("m_star", 6),  # r = 3 random teacher: fine; prototype below is not
        ("k_fit_max", 21),  # must exceed k_fit_min + 2
    ],
)
def test_bad_parameter_is_named(name, value):
    extra = {"teacher": "prototype", "r": 2} if name == "m_star" else {}
    with pytest.raises(ParameterError, match=name):
        ch.SPEC.params("smoke", **{name: value}, **extra)


def test_smoke_profile_values():
    P = ch.SPEC.params("smoke")
    assert (P.k_max, P.gh_nodes, P.k_fit_min, P.k_fit_max) == (30, [10, 40, 150], 20, 400)
    assert (P.d, P.m, P.mc_samples, P.r, P.m_star, P.teacher) == (8, 6, 100_000, 3, 4, "random")


# --- setup fidelity ---------------------------------------------------------------------------


def test_coefficients_step_is_lemma_a1_by_an_independent_formula():
    P = tiny()
    co = ch.coefficients(P)
    # Lemma A.1 by exact rational arithmetic in the binomial form (not the code's lgamma form)
    for k in range(P.k_max + 1):
        if k == 0:
            want = 1 / math.sqrt(2 * math.pi)
        elif k == 1:
            want = 0.5
        elif k % 2:
            want = 0.0
        else:
            want = (
                (-1) ** (k // 2 - 1)
                / math.sqrt(2 * math.pi)
                / (k - 1)
                * math.sqrt(comb(k, k // 2, exact=True) / 2**k)
            )
        assert co.closed[k] == pytest.approx(want, abs=1e-15)
        assert co.abs_closed[k] == pytest.approx(
            math.sqrt(2 / math.pi) if k == 0 else 2 * want * (k % 2 == 0), abs=1e-15
        )
    assert co.gh_nodes == P.gh_nodes and len(co.gh_err) == len(P.gh_nodes)


def test_decay_step_uses_the_even_orders_and_the_constant():
    P = tiny()
    dk = ch.decay(P)
    assert dk.ks.tolist() == list(range(2, P.k_fit_max + 1, 2))
    assert dk.C == pytest.approx(1 / (math.sqrt(2 * math.pi) * (math.pi / 2) ** 0.25), rel=1e-15)
    sel = dk.ks >= P.k_fit_min
    slope = np.polyfit(np.log(dk.ks[sel]), np.log(dk.coef[sel]), 1)[0]
    assert dk.slope == pytest.approx(slope, rel=1e-12)


def test_kernel_step_grid_order_and_correlations():
    P = tiny()
    ke = ch.kernel(P)
    assert ke.K == P.k_max and ke.k_a1 == min(P.k_max, 24)
    assert ke.rhos == (0.3, -0.7, 0.95)
    assert len(ke.t) == 401 and ke.t[0] == -1 and ke.t[-1] == 1
    # the kernels are the arc-cosine formula of the page
    t = ke.t
    k1 = (np.sqrt(1 - t**2) + (np.pi - np.arccos(t)) * t) / (2 * np.pi)
    assert np.abs(ke.k1 - k1).max() < 1e-15
    assert np.abs(ke.kappa2 - (k1 - 1 / (2 * np.pi) - t / 4)).max() < 1e-15


def test_claim_a1_moments_by_monte_carlo():
    """The moments the check uses are those of rho-correlated standard normals: sampled."""
    ke = ch.kernel(tiny(k_max=4))
    rng = np.random.default_rng(5)
    x, z = rng.standard_normal((2, 400_000))
    for rho, M in zip(ke.rhos, ke.moments, strict=True):
        y = rho * x + math.sqrt(1 - rho**2) * z
        hx, hy = hermite.hermite_normalized(4, x), hermite.hermite_normalized(4, y)
        mc = hx @ hy.T / x.size
        assert np.abs(mc - M).max() < 0.05


def test_tail_upper_bound_bounds_the_true_tail_tightly():
    for K in (4, 10, 30, 100):
        # the true tail by summing Lemma A.1's coefficients far out, in the binomial form
        k = np.arange(K + 1, 400_001)
        k = k[k % 2 == 0].astype(float)
        from scipy.special import gammaln

        log_b = gammaln(k + 1) - 2 * gammaln(k / 2 + 1) - k * math.log(2)
        s2 = np.exp(log_b) / (2 * math.pi) / (k - 1) ** 2
        tail_far = float(s2.sum())
        B = ch.tail_upper_bound(K)
        T = hermite.tail_bound(K)
        assert tail_far <= T <= B
        assert B / T - 1 < 1 / (2 * K)


def test_second_order_step_directions_and_teacher():
    P = tiny()
    so = ch.second_order(P)
    t = so.teacher
    assert (t.d, t.m) == (P.d, P.m_star)
    assert np.allclose(np.linalg.norm(t.W, axis=1), 1.0)
    assert np.linalg.matrix_rank(t.W) == P.r
    assert np.allclose(np.linalg.norm(so.V, axis=1), 1.0)
    basis = t.info["basis"]
    inside = np.linalg.norm(so.V[:2] @ basis, axis=1)
    assert np.allclose(inside, 1.0)  # the first two directions lie in S_*
    # the first is the eigenvector of H in S_* with the smallest |eigenvalue|
    Hs = basis.T @ t.H() @ basis
    ev = np.linalg.eigvalsh(Hs)
    v = so.V[0] @ basis
    assert abs(v @ Hs @ v) == pytest.approx(np.abs(ev).min(), abs=1e-12)
    # sigma_2 v^T H v with sigma_2 = 1/(2 sqrt(pi)) (Lemma A.1 at k = 2)
    s2 = 1 / (2 * math.sqrt(math.pi))
    assert np.allclose(so.theory, s2 * np.einsum("id,de,ie->i", so.V, t.H(), so.V))
    # and the Monte Carlo means are E[f*(x) h_2(v.x)] within 5 standard errors
    assert np.all(np.abs(so.mc - so.theory) <= 5 * so.se)


def test_claim_b1_student_and_loss_formula():
    """The page's student: positive output weights (>= 0.5), neurons of norm 2, alpha = 0.3;
    the recorded loss is E[(f - y~)^2] with y~ = f* - alpha* - beta*.x (eq. (3)), sampled here
    with its own formula."""
    P = tiny()
    so = ch.second_order(P)
    b1 = ch.claim_b1(P, so.teacher)
    s, t = b1.student, so.teacher
    assert s.a.shape == (P.m,) and s.W.shape == (P.m, P.d)
    assert np.all(s.a >= 0.5)
    assert np.allclose(np.linalg.norm(s.W, axis=1), 2.0)
    assert s.alpha == 0.3 and np.any(s.beta != 0)
    rng = np.random.default_rng(17)
    X = rng.standard_normal((400_000, P.d))
    f = np.maximum(X @ s.W.T, 0) @ s.a + s.alpha + X @ s.beta
    fstar = np.maximum(X @ t.W.T, 0) @ t.a
    alpha_star = t.a @ np.linalg.norm(t.W, axis=1) / math.sqrt(2 * math.pi)
    beta_star = 0.5 * t.a @ t.W
    r2 = (f - (fstar - alpha_star - X @ beta_star)) ** 2
    se = r2.std() / math.sqrt(r2.size)
    assert abs(r2.mean() - b1.L_closed) < 5 * se
    assert abs(b1.L_mc - b1.L_closed) < 5 * b1.L_se
    # Claim B.1's offset: c = sum_i a_i (||w_i|| - 1) / sqrt(2 pi) = sum a_i / sqrt(2 pi)
    assert b1.terms["literal_offset"] == pytest.approx(s.a.sum() / math.sqrt(2 * math.pi))


def test_appendix_i_rows_grid_and_crossing():
    P = tiny()
    ai = ch.appendix_i(P)
    assert ai.i1_p.tolist() == [1] * 2 + [2] * 2 + [3] * 2
    assert ai.i1_k.tolist() == P.ks_i1 * 3
    # where 2 ln(2/beta) = e ln(1/beta), solved numerically
    crossing = brentq(lambda b: 2 * math.log(2 / b) - math.e * math.log(1 / b), 0.01, 0.5)
    assert ai.crossing == pytest.approx(crossing, rel=1e-10)
    assert np.all(np.abs(ai.grid - crossing) > 1e-6) and len(ai.grid) >= 998
    # the numerical maximum of k^(1/2) beta^(k/2) over a fine grid of k
    ks = np.linspace(1e-3, 2000, 2_000_001)
    for b, mx in zip(ai.betas, ai.i2_max, strict=True):
        assert np.max(np.sqrt(ks) * b ** (ks / 2)) == pytest.approx(mx, rel=1e-5)


# --- the kernel checks can fail ---------------------------------------------------------------


def _with_coefficients(ke, coef, start=0):
    ks = np.arange(len(coef))
    s = (np.asarray(coef)[start:, None] ** 2 * ke.t[None, :] ** ks[start:, None]).sum(0)
    return replace(ke, series=s) if start == 0 else replace(ke, series2=s)


@pytest.mark.parametrize("check", ["kernel_is_hermite_series", "kappa2_is_series_from_order_two"])
@pytest.mark.parametrize(
    "plant",
    [
        ("order 2 missing", lambda c: c.__setitem__(2, 0.0)),
        ("order 4 missing", lambda c: c.__setitem__(4, 0.0)),
        ("sigma_2 10% too large", lambda c: c.__setitem__(2, 1.1 * c[2])),
        ("sigma_6 10% too small", lambda c: c.__setitem__(6, 0.9 * c[6])),
        ("every coefficient 1% too large", lambda c: c.__imul__(1.01)),
    ],
    ids=lambda p: p[0] if isinstance(p, tuple) else p,
)
def test_kernel_checks_fail_on_a_wrong_series(check, plant):
    P = ch.SPEC.params("smoke")
    ke = ch.kernel(P)
    assert getattr(ch, check)(P, ke).outcome() is True
    coef = hermite.relu_coefficients(ke.K)
    plant[1](coef)
    start = 0 if check == "kernel_is_hermite_series" else 2
    assert getattr(ch, check)(P, _with_coefficients(ke, coef, start)).outcome() is False


def test_kernel_check_fails_on_a_wrong_kernel():
    P = ch.SPEC.params("smoke")
    ke = ch.kernel(P)
    t = ke.t
    wrong = (np.sqrt(1 - t**2) + (np.pi - np.arccos(t)) * t) / (2 * np.pi) * 1.001
    assert ch.kernel_is_hermite_series(P, replace(ke, k1=wrong)).outcome() is False


def test_kernel_check_bound_is_not_the_rounding_term():
    """At t = +-1 the residual is the tail itself; it must sit strictly below the bound B_K by
    far more than the rounding allowance (the check passes by the derived bound, not by
    rounding)."""
    P = ch.SPEC.params("smoke")
    ke = ch.kernel(P)
    gap = ch.tail_upper_bound(ke.K) - (ke.k1[-1] - ke.series[-1])
    assert gap > 100 * ch.rounding_allowance(ke.K)


def test_gauss_hermite_reading_follows_the_fit():
    co = ch.coefficients(tiny())
    assert "$s = " in ch.gauss_hermite_reading(co)
    few = replace(co, gh_nodes=[4, 16], gh_err=co.gh_err[:2])
    assert "do not resolve" in ch.gauss_hermite_reading(few)
    assert ch.gauss_hermite_error_rate(None, few).outcome() is None


def test_lemma_i2_reading_follows_the_betas():
    P = tiny(betas_i2=[0.05, 0.1])
    ai = ch.appendix_i(P)
    assert "at most" in ch.lemma_i2_reading(P, ai)
    assert ch.lemma_i2_printed_bound_false(P, ai).outcome() is None


# --- the page's statement boxes ---------------------------------------------------------------


def _directive_blocks(text: str):
    """(name, body) of every fenced directive (```` or ```) of the page."""
    out = []
    for m in re.finditer(r"^(`{3,}|:{3,})\{([\w:-]+)\}[^\n]*\n(.*?)^\1\s*$", text, re.M | re.S):
        out.append((m.group(2), m.group(3)))
    return out


def test_statement_boxes_have_no_dollar_display_math():
    """Display math inside a prf box or an admonition is a ``{math}`` block: ``$$`` inside a
    directive ran the box's prose into the formula on the built page."""
    blocks = _directive_blocks(PAGE.read_text(encoding="utf-8"))
    assert any(name == "prf:lemma" for name, _ in blocks)
    for name, body in blocks:
        if name.startswith("prf:") or name == "admonition":
            assert "$$" not in body, f"{name} holds $$ display math"


@pytest.mark.slow
def test_statement_boxes_render(tmp_path):
    """Lemma A.1's and Claim B.1's boxes through Sphinx with the book's MyST extensions: each
    formula is a math node, no ``$`` is left in the text, and the boxes keep their prose."""
    import subprocess
    import sys

    text = PAGE.read_text(encoding="utf-8")
    boxes = [m.group(0) for m in re.finditer(r"^````\{prf:[^\n]*\n.*?^````\s*$", text, re.M | re.S)]
    assert len(boxes) >= 2
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        'extensions = ["myst_parser", "sphinx_proof"]\n'
        'myst_enable_extensions = ["amsmath", "colon_fence", "deflist", "dollarmath"]\n'
    )
    (src / "index.md").write_text("# Boxes\n\n" + "\n\n".join(boxes) + "\n")
    out = tmp_path / "out"
    subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", "html", str(src), str(out)], check=True
    )
    from bs4 import BeautifulSoup

    soup = BeautifulSoup((out / "index.html").read_text(), "html.parser")
    proofs = soup.select("div.proof")
    assert len(proofs) == len(boxes)
    prose = ""
    for box in proofs:
        assert box.select("div.math"), "a box lost its display formula"
        for m in box.select(".math"):
            m.decompose()
        words = " ".join(box.get_text(" ").split())
        assert "$" not in words and "\\frac" not in words and "\\hat" not in words
        prose += words + " "
    # the prose after Lemma A.1's display stays prose, with its spaces
    assert "the even coefficients are twice these and the odd ones vanish" in prose
