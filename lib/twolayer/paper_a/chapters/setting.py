"""Chapter "The setting" (``notebooks/paper_a/setting.md``): Paper A's network and its
homogeneity, the two activations of Definition 4.1 (the paper's Figure 3), the data models of
Section 5, and how large ``d`` must be for Theorem 3.2's near-orthogonality (Lemma 3.3, with
the book's explicit constants).

``SPEC`` declares the page's parameters once. The page narrates four steps, each a function
returning named fields, gathered in a :class:`Result` (:func:`compute` runs them all):

1. :func:`network` -- the network's second layer and (non-)homogeneity (:class:`Network`);
2. :func:`activations_on_grid` -- Definition 4.1 for the smoothed leaky ReLU on a grid
   (:class:`Activations`);
3. :func:`data_models` -- the Gaussian mixture and noisy 2-XOR, drawn and tested on fresh
   samples (:class:`DataModels`);
4. :func:`lemma33` -- the sweep over ``n`` and ``d``, draws at the book's ``d_suff``, and the
   fit of ``d_50 ~ n^2 (log n)^b`` (:class:`Lemma33`).

Hypotheses and checks are functions ``(P, R)`` returning a
:class:`~twolayer.page.checks.Claim`, so that a test can call them on an input where the
statement is false (``tests/failing_cases/paper_a_setting.py``). The sweeps themselves live in
:mod:`twolayer.paper_a.assumptions`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from scipy.stats import norm as gaussian

from ...core.device import default_device, resolve_dtype
from ...core.params import Choice, Constraint, Device, Float, Int, ListOf, Optional
from ...page.checks import Claim
from ...page.contract import ChapterSpec
from .. import activations, assumptions, data, models

__all__ = [
    "SPEC",
    "LOG_FACTOR",
    "Network",
    "Activations",
    "DataModels",
    "Sweep",
    "Lemma33",
    "Result",
    "network",
    "activations_on_grid",
    "data_models",
    "lemma33",
    "compute",
]

#: the book's statements this page checks (``prf`` blocks on the page)
D_SUFF = "book-lem-d-suff"  # the explicit Lemma 3.3: bounds with constants, and d_suff
LOG_FACTOR = "book-obs-lemma33-log"  # the half point needs Lemma 3.3's log n

#: the fresh samples of the data-model checks
N_FRESH_GMM = 20_000
N_FRESH_XOR = 5_000
#: the largest CI width of the exponent ``b`` that tells ``b = 1`` from ``b = 0``
CI_WIDTH_MAX = 1.5


def _default_ratio_max(P):
    # The transition moves like gamma^-6: place the grid relative to our explicit
    # sufficient dimension, so that it brackets the transition for any gamma and
    # covariance.
    return 0.6 * max(
        assumptions.sufficient_dimension(n, P.gamma, P.delta) / (n * n * math.log(n)) for n in P.ns
    )


SPEC = ChapterSpec(
    chapter="paper_a/setting",
    spec={
        "device": Device(
            doc='where the tensors live; "auto": CUDA when present, else the CPU',
            fixed="machinery: where the tensors live, not what is computed",
        ),
        "dtype": Choice(
            "float64",
            "float32",
            doc="floating-point type (float64 only here)",
            fixed="float64 only: a constraint of this page says why",
        ),
        "gamma": Float(
            0,
            1,
            lo_open=True,
            explore=(0.5, 1.0),
            doc="leak of the activation, in the network and in Lemma 3.3",
        ),
        "gamma_figure": Float(
            0,
            1,
            lo_open=True,
            explore=(0.05, 0.9),
            doc="leak drawn in the activation figure (Figure 3)",
        ),
        "ns": ListOf(
            Int(2, 4096),
            increasing=True,
            explore=[[4, 8, 16], [4, 16], [8, 16]],
            doc="sample sizes n of the Lemma 3.3 sweep",
        ),
        "draws": Int(2, 10_000, explore=(4, 32), doc="random data sets per (n, d)"),
        "ratio_min": Optional(
            Float(0, None, lo_open=True),
            doc="smallest d / (n^2 log n) of the sweep (None: ratio_max / 300)",
            fixed="the sweep's window, derived from d_suff for every n; an absolute value fits "
            "one n only",
        ),
        "ratio_max": Optional(
            Float(0, None, lo_open=True),
            doc="largest d / (n^2 log n) (None: 0.6 x the largest d_suff / (n^2 log n))",
            fixed="the sweep's window, derived from d_suff for every n; an absolute value fits "
            "one n only",
        ),
        "num_ratios": Int(3, 200, explore=(4, 12), doc="grid points between them (log-spaced)"),
        "delta": Float(
            0,
            0.1,
            lo_open=True,
            explore=(1e-6, 1e-2),
            doc="failure probability of the explicit union bounds",
        ),
        "aniso": Float(
            0,
            1,
            hi_open=True,
            explore=(0.0, 0.9),
            doc="anisotropy of the second covariance: eigenvalues 1 + aniso and "
            "(about) 1 - aniso, trace d; 0 skips the anisotropic sweep",
        ),
        "gram": Choice(
            "wishart",
            "coordinates",
            explore=True,
            doc="how the Lemma 3.3 sweep draws a data set's Gram matrix: from "
            "its law (wishart, O(n^3)) or from drawn data (coordinates, O(n d))",
        ),
        "d_data": Int(
            2,
            10**7,
            explore=(200, 4000),
            doc="dimension of the illustrated Gaussian mixture and XOR data",
        ),
    },
    defaults={
        "seed": 0,
        "profile": None,
        "results_path": None,
        "device": "auto",
        "dtype": "float64",
        "gamma": 0.9,
        "gamma_figure": 0.2,
        "ns": None,
        "draws": None,
        "ratio_min": None,
        "ratio_max": None,
        "num_ratios": None,
        "delta": 1e-4,
        "aniso": None,
        "gram": "wishart",
        "d_data": None,
    },
    profiles={
        "smoke": {"ns": [4, 8, 16], "draws": 8, "num_ratios": 6, "d_data": 400, "aniso": 0.0},
        "book": {
            "ns": [4, 8, 16, 32],
            "draws": 16,
            "num_ratios": 10,
            "d_data": 2000,
            "aniso": 0.8,
        },
        "paper": {
            "ns": [4, 8, 16, 32, 64],
            "draws": 100,
            "num_ratios": 20,
            "d_data": 10_000,
            "aniso": 0.8,
        },
    },
    derive={"ratio_max": _default_ratio_max, "ratio_min": lambda P: P.ratio_max / 300},
    constraints=[
        Constraint(
            "dtype",
            lambda P: P.dtype == "float64",
            'must be "float64" on this page: its identities are checked to '
            "1e-15, far below float32's rounding (6e-8)",
        ),
        Constraint(
            "ratio_max", lambda P: P.ratio_max > P.ratio_min, "must be larger than ratio_min"
        ),
    ],
)


def where(P):
    """``(device, dtype)`` of the page's tensors: ``P.device`` resolved, and ``P.dtype``."""
    return default_device(P.device), resolve_dtype(P.dtype)


# --- step 1: the network ----------------------------------------------------------------------


@dataclass
class Network:
    """Step 1 (:func:`network`).

    Attributes:
        net, smooth_net: the network with ``m1 = 3``, ``m2 = 2`` and the leaky ReLU, or the
            smoothed leaky ReLU, at leak ``gamma``.
        a: the second layer (NumPy).
        homog_err: ``max_c |f(x; cW) - c f(x; W)| / c`` of the leaky network on 6 Gaussian
            points in ``R^50``, over ``c`` in ``SCALES``.
        smooth_err: the same defect of the smoothed network.
    """

    net: models.LeakyNetwork
    smooth_net: models.LeakyNetwork
    a: np.ndarray
    homog_err: float
    smooth_err: float


SCALES = (0.01, 0.5, 3.0, 100.0)


def homogeneity_defect(net, W, X, scales=SCALES) -> float:
    """``max_c max_i |f(x_i; cW) - c f(x_i; W)| / c`` (0 for a 1-homogeneous network)."""
    return max(float((net(c * W, X) - c * net(W, X)).abs().max()) / c for c in scales)


def network(P, *, device=None) -> Network:
    """Step 1: Paper A's network (Section 2) with ``m1 = 3``, ``m2 = 2``, the leaky and the
    smoothed leaky ReLU at ``gamma``, and their homogeneity defects on 6 nearly-orthogonal
    points in ``R^50`` with a standard Gaussian ``W`` (both from ``seed``).

    Args:
        P: the validated parameters.
        device: where the tensors live (default: ``P.device``).

    Returns:
        a :class:`Network`.
    """
    device = default_device(P.device) if device is None else device
    net = models.LeakyNetwork(m1=3, m2=2, phi="leaky_relu", gamma=P.gamma)
    smooth_net = models.LeakyNetwork(m1=3, m2=2, phi="smoothed_leaky_relu", gamma=P.gamma)
    demo = data.nearly_orthogonal(n=6, d=50, seed=P.seed)
    X, _ = demo.torch(device=device)
    W = net.init(d=50, scale=1.0, seed=P.seed, device=device)
    return Network(
        net=net,
        smooth_net=smooth_net,
        a=net.a().numpy(),
        homog_err=homogeneity_defect(net, W, X),
        smooth_err=homogeneity_defect(smooth_net, W, X),
    )


def second_layer_fixed_signs(P, R: Result) -> Claim:
    """The second layer is ``+-1/sqrt(m)`` (sanity: by construction)."""
    a_expected = [1 / math.sqrt(5)] * 3 + [-1 / math.sqrt(5)] * 2
    return Claim(
        "second_layer_fixed_signs",
        "sanity",
        value=float(np.abs(R.network.a - a_expected).max()),
        bound=1e-15,
        op="<=",
        detail="largest |a_j − (±1/√m)| over the 5 output weights",
    )


def leaky_net_homogeneous(P, R: Result) -> Claim:
    """The leaky network is 1-homogeneous (sanity: an identity of the leaky ReLU)."""
    return Claim(
        "leaky_net_homogeneous",
        "sanity",
        value=R.network.homog_err,
        bound=1e-12,
        op="<=",
        detail="largest |f(x; cW) − c f(x; W)| / c over the points and 4 scales c",
    )


def smoothed_net_not_homogeneous(P, R: Result) -> Claim:
    """The smoothed network is not homogeneous for ``gamma < 1``: its defect is ``(1 -
    gamma)`` times an O(1) quantity, far above rounding (sanity)."""
    return Claim(
        "smoothed_net_not_homogeneous",
        "sanity",
        value=R.network.smooth_err,
        bound=1e-10,
        op=">",
        detail="the same defect for the smoothed leaky ReLU",
        applies=(P.gamma < 1, "gamma = 1: the smoothed activation is the identity"),
    )


# --- step 2: the activations ------------------------------------------------------------------


@dataclass
class Activations:
    """Step 2 (:func:`activations_on_grid`): the two activations at ``gamma_figure`` and what
    the grid of ``[-50, 50]`` (100 001 points) shows of the smoothed one.

    Attributes:
        leaky, smooth: the activations (callables with ``grad`` and ``hess``).
        phi0: ``|phi(0)|``.
        slope_min, slope_max: the extremes of ``phi'`` on the grid.
        curvature_max: the largest ``|phi''|`` on the grid.
        fd_error: the largest ``|central difference (h = 1e-3) - phi'|`` on the grid.
    """

    leaky: activations.Activation
    smooth: activations.Activation
    phi0: float
    slope_min: float
    slope_max: float
    curvature_max: float
    fd_error: float


def activations_on_grid(P, *, device=None) -> Activations:
    """Step 2: the leaky and the smoothed leaky ReLU at ``gamma_figure`` (Paper A, Definition
    4.1's example), and the smoothed one's value at 0, slopes and curvature on a fine grid of
    ``[-50, 50]`` (beyond it the sigmoid is within ``e^-50`` of 0 or 1).

    Args:
        P: the validated parameters.
        device: where the grid lives (default: ``P.device``).

    Returns:
        an :class:`Activations`.
    """
    device = default_device(P.device) if device is None else device
    leaky = activations.get_activation("leaky_relu", P.gamma_figure)
    smooth = activations.get_activation("smoothed_leaky_relu", P.gamma_figure)
    zz = torch.linspace(-50, 50, 100_001, dtype=torch.float64, device=device)
    d1, d2 = smooth.grad(zz), smooth.hess(zz)
    h = 1e-3
    fd = (smooth(zz + h) - smooth(zz - h)) / (2 * h)
    return Activations(
        leaky=leaky,
        smooth=smooth,
        phi0=abs(float(smooth(torch.zeros(1, dtype=torch.float64)))),
        slope_min=float(d1.min()),
        slope_max=float(d1.max()),
        curvature_max=float(d2.abs().max()),
        fd_error=float((fd - d1).abs().max()),
    )


def smoothed_phi_zero_at_origin(P, R: Result) -> Claim:
    """Definition 4.1's ``phi(0) = 0`` for the smoothed leaky ReLU. Sanity: an identity of the
    formula (``softplus(0) = log 2``), so it tests the library, not the paper."""
    return Claim(
        "smoothed_phi_zero_at_origin",
        "sanity",
        statement="a-def-4-1",
        value=R.activations.phi0,
        bound=1e-15,
        op="<=",
        detail="|φ(0)| for the smoothed leaky ReLU (an identity of the formula)",
    )


def smoothed_phi_gamma_leaky(P, R: Result) -> Claim:
    """``phi' in [gamma, 1]``. Sanity: ``phi' = gamma + (1 - gamma) sigmoid``, proved on the
    page; it tests the library's implementation."""
    A = R.activations
    return Claim(
        "smoothed_phi_gamma_leaky",
        "sanity",
        statement="a-def-4-1",
        value=(A.slope_min, A.slope_max),
        bound=(A.smooth.gamma - 1e-15, 1 + 1e-15),
        op="in",
        detail="min or max of φ′ on a grid of [−50, 50], whichever is farther out "
        "(an identity of the formula)",
    )


def smoothed_phi_quarter_smooth(P, R: Result) -> Claim:
    """``|phi''| <= 1/4``. Sanity: ``phi'' = (1 - gamma) sigmoid (1 - sigmoid) <= (1 -
    gamma)/4``, proved on the page; it tests the library's implementation."""
    return Claim(
        "smoothed_phi_quarter_smooth",
        "sanity",
        statement="a-def-4-1",
        value=R.activations.curvature_max,
        bound=0.25,
        op="<=",
        detail="largest |φ″| on a grid of [−50, 50] (an identity of the formula)",
    )


def smoothed_phi_derivative(P, R: Result) -> Claim:
    """``phi'`` is the derivative of ``phi``: central differences have error ``O(h^2) =
    1e-6`` at ``h = 1e-3`` (sanity)."""
    return Claim(
        "smoothed_phi_derivative",
        "sanity",
        value=R.activations.fd_error,
        bound=1e-6,
        op="<",
        detail="largest |central difference (h = 0.001) − φ′| on the grid",
    )


# --- step 3: the data models --------------------------------------------------------------------


@dataclass
class BayesError:
    """The error of ``sign<mu, x>`` on fresh mixture samples against ``Phi(-||mu||)``, and the
    slack allowed to it: 5 binomial standard deviations plus one sample."""

    err: float
    theory: float
    slack: float


def bayes_error(X, y, mu) -> BayesError:
    """:class:`BayesError` of ``sign<mu, x>`` on ``(X, y)``."""
    n = len(y)
    err = float(np.mean(np.sign(X @ mu) != y))
    theory = float(gaussian.cdf(-np.linalg.norm(mu)))
    slack = 5 * math.sqrt(max(theory * (1 - theory), 1e-12) / n) + 1 / n
    return BayesError(err, theory, slack)


def linear_errors(X, y, Z) -> np.ndarray:
    """Test errors of the linear classifiers ``sign<z, x>`` for the rows ``z`` of ``Z``."""
    return np.mean(np.sign(X @ Z.T) != y[:, None], axis=0)


@dataclass
class DataModels:
    """Step 3 (:func:`data_models`).

    Attributes:
        gmm, xor: the illustrated Gaussian mixture and noisy 2-XOR (600 points each, ``beta =
            0.3``, dimension ``d_data``).
        e1, e2: ``mu / ||mu||`` and a random unit direction orthogonal to it.
        u1, u2: ``mu_1 / ||mu_1||`` and ``mu_2 / ||mu_2||`` of the XOR data.
        bayes: ``{"page": ..., "unit": ...}``: :class:`BayesError` on 20 000 fresh mixture
            samples, for the page's ``mu`` and for ``mu / ||mu||``.
        xor_label_flips: fresh XOR points (of 5 000) whose label at ``-x`` differs from ``y``.
        linear_errors: the test errors of 20 random linear classifiers on those points.
        linear_bound: 5 binomial standard deviations of an error of 1/2 on them.
    """

    gmm: data.Dataset
    xor: data.Dataset
    e1: np.ndarray
    e2: np.ndarray
    u1: np.ndarray
    u2: np.ndarray
    bayes: dict
    xor_label_flips: int
    linear_errors: np.ndarray
    linear_bound: float

    @property
    def mu(self) -> np.ndarray:
        return self.gmm.info["mu"]


def data_models(P) -> DataModels:
    """Step 3: the Gaussian mixture and noisy 2-XOR of Section 5 (``beta = 0.3``) in dimension
    ``d_data``, and fresh samples (seed ``seed + 1``) to test what Section 5 says of them: the
    error of ``sign<mu, x>`` is ``Phi(-||mu||)``; XOR's labels are even in ``x``, so every
    linear classifier errs half of the time.

    Args:
        P: the validated parameters.

    Returns:
        a :class:`DataModels`.
    """
    gmm = data.gaussian_mixture(n=600, d=P.d_data, seed=P.seed, beta=0.3)
    xor = data.noisy_xor(n=600, d=P.d_data, seed=P.seed, beta=0.3)
    mu = gmm.info["mu"]
    e1 = mu / np.linalg.norm(mu)
    r = np.random.default_rng([P.seed, 1]).standard_normal(P.d_data)
    e2 = r - (r @ e1) * e1
    e2 /= np.linalg.norm(e2)
    u1, u2 = (xor.info[k] / np.linalg.norm(xor.info[k]) for k in ("mu1", "mu2"))
    bayes = {}
    for key, mu_c in (("page", mu), ("unit", mu / np.linalg.norm(mu))):
        fresh = data.gaussian_mixture(n=N_FRESH_GMM, d=P.d_data, seed=P.seed + 1, mu=mu_c)
        bayes[key] = bayes_error(fresh.X, fresh.y, mu_c)
    xor_fresh = data.noisy_xor(n=N_FRESH_XOR, d=P.d_data, seed=P.seed + 1, beta=0.3)
    Xf, yf = xor_fresh.X, xor_fresh.y
    y_even = np.where(
        np.abs(-Xf @ xor_fresh.info["mu1"]) >= np.abs(-Xf @ xor_fresh.info["mu2"]), 1.0, -1.0
    )
    z_rand = np.random.default_rng([P.seed, 2]).standard_normal((20, P.d_data))
    return DataModels(
        gmm=gmm,
        xor=xor,
        e1=e1,
        e2=e2,
        u1=u1,
        u2=u2,
        bayes=bayes,
        xor_label_flips=int((y_even != yf).sum()),
        linear_errors=linear_errors(Xf, yf, z_rand),
        linear_bound=5 * math.sqrt(0.25 / len(yf)),
    )


def gmm_bayes_error(P, R: Result) -> Claim:
    """The error of ``sign<mu, x>`` at the page's ``mu`` against ``Phi(-||mu||)``. Sanity: at
    ``||mu|| = d^0.3`` the predicted error is below one in 20 000, so fresh samples cannot
    resolve it (the check only sees that the classes separate);
    :func:`gmm_bayes_error_unit_mean` tests the law."""
    b = R.data.bayes["page"]
    return Claim(
        "gmm_bayes_error",
        "sanity",
        statement="a-sec-5#gmm",
        value=abs(b.err - b.theory),
        bound=b.slack,
        op="<=",
        detail="|error of sign⟨μ, x⟩ − Φ(−‖μ‖)| on 20 000 fresh samples (Φ(−‖μ‖) below "
        "1/20 000: unresolved)",
    )


def gmm_bayes_error_unit_mean(P, R: Result) -> Claim:
    """Section 5: the error of ``sign<mu, x>`` is ``Phi(-||mu||)``, for ``mu`` scaled to norm
    1 (error 0.16, resolved by 20 000 fresh samples): within 5 binomial standard deviations
    plus one sample (a false alarm has probability below ``1e-6``)."""
    b = R.data.bayes["unit"]
    return Claim(
        "gmm_bayes_error_unit_mean",
        "theorem",
        statement="a-sec-5#gmm",
        value=abs(b.err - b.theory),
        bound=b.slack,
        op="<=",
        detail="|error of sign⟨μ, x⟩ − Φ(−‖μ‖)| on 20 000 fresh samples, μ scaled to norm 1",
    )


def xor_labels_even(P, R: Result) -> Claim:
    """XOR's labels are even in ``x`` (sanity: an identity of the construction)."""
    return Claim(
        "xor_labels_even",
        "sanity",
        value=R.data.xor_label_flips,
        bound=0,
        op="==",
        detail="fresh points (of 5 000) whose label at −x differs from y",
    )


def xor_linear_error_half(P, R: Result) -> Claim:
    """Section 5: every linear classifier has test error 1/2 on noisy 2-XOR; 20 random
    directions on 5 000 fresh points, each within 5 binomial standard deviations of 1/2."""
    D = R.data
    return Claim(
        "xor_linear_error_half",
        "theorem",
        statement="a-sec-5#xor",
        value=np.abs(D.linear_errors - 0.5),
        bound=D.linear_bound,
        op="<=",
        detail="largest |test error − 1/2| of 20 random linear classifiers",
    )


# --- step 4: Lemma 3.3 ----------------------------------------------------------------------------


@dataclass
class Sweep:
    """One covariance's sweep: the draws, their fractions per ``(n, d)``, the half points
    ``d_50 / (n^2 log n)`` per ``n`` and ``s = ||Sigma||_2``."""

    rows: pd.DataFrame
    frac: pd.DataFrame
    d50: dict
    s: float


@dataclass
class Lemma33:
    """Step 4 (:func:`lemma33`).

    Attributes:
        d_suff: the book's explicit sufficient dimension per ``n``.
        ratios: the grid of ``d / (n^2 log n)``.
        sweeps: ``{"isotropic": Sweep, "anisotropic": Sweep}`` (the second only when
            ``aniso > 0``).
        at_suff: fresh draws (seed ``seed + 1``) at exactly ``d_suff``.
        b, ci: the fitted exponent of ``d_50 ~ n^2 (log n)^b`` (isotropic) and its 95%
            bootstrap interval.
        b_aniso, ci_aniso: the same for the anisotropic sweep (``None`` without one).
    """

    d_suff: dict
    ratios: np.ndarray
    sweeps: dict
    at_suff: pd.DataFrame
    b: float
    ci: tuple
    b_aniso: float | None = None
    ci_aniso: tuple | None = None

    @property
    def d50(self) -> dict:
        return self.sweeps["isotropic"].d50


def _sweep(rows, s: float) -> Sweep:
    frac = assumptions.fraction_table(rows)
    d50 = {n: assumptions.half_point(g.ratio, g.fraction) for n, g in frac.groupby("n")}
    return Sweep(rows=rows, frac=frac, d50=d50, s=s)


def lemma33(P) -> Lemma33:
    """Step 4: for each ``n``, ``draws`` Gaussian data sets at ``d`` on the log grid of ``d /
    (n^2 log n)`` from ``ratio_min`` to ``ratio_max`` (seed ``seed``), fresh draws at the
    book's ``d_suff`` (seed ``seed + 1``), the same grid with the two-level covariance of
    anisotropy ``aniso`` (seed ``seed + 2``; skipped at 0), and the fits of ``d_50 ~ n^2 (log
    n)^b`` (:func:`twolayer.paper_a.assumptions.log_exponent`, 200 bootstrap resamples).

    Args:
        P: the validated parameters.

    Returns:
        a :class:`Lemma33`.
    """
    d_suff = {n: assumptions.sufficient_dimension(n, P.gamma, P.delta) for n in P.ns}
    ratios = np.geomspace(P.ratio_min, P.ratio_max, P.num_ratios)
    sweep = pd.DataFrame(
        assumptions.lemma33_sweep(P.ns, ratios, P.draws, P.gamma, seed=P.seed, gram=P.gram)
    )
    at_suff = pd.DataFrame(
        assumptions.lemma33_sweep(
            P.ns,
            None,
            P.draws,
            P.gamma,
            seed=P.seed + 1,
            dims={n: [d_suff[n]] for n in P.ns},
            gram=P.gram,
        )
    )
    b, ci = assumptions.log_exponent(sweep, n_boot=200, seed=P.seed)
    sweeps = {"isotropic": _sweep(sweep, 1.0)}
    out = Lemma33(d_suff=d_suff, ratios=ratios, sweeps=sweeps, at_suff=at_suff, b=b, ci=ci)
    if P.aniso > 0:
        an = pd.DataFrame(
            assumptions.lemma33_sweep(
                P.ns, ratios, P.draws, P.gamma, seed=P.seed + 2, aniso=P.aniso, gram=P.gram
            )
        )
        sweeps["anisotropic"] = _sweep(an, 1.0 + P.aniso)
        out.b_aniso, out.ci_aniso = assumptions.log_exponent(an, n_boot=200, seed=P.seed)
    return out


def summary(P, L: Lemma33) -> pd.DataFrame:
    """The page's table: per ``n``, ``d_50 / (n^2 log n)`` (both covariances), ``d_suff`` and
    the fraction of the draws at ``d_suff`` that satisfy the assumption."""
    at = L.at_suff
    return pd.DataFrame(
        {
            "n": P.ns,
            "d_50 / (n² log n)": [L.d50[n] for n in P.ns],
            **(
                {"anisotropic d_50 / (n² log n)": [L.sweeps["anisotropic"].d50[n] for n in P.ns]}
                if "anisotropic" in L.sweeps
                else {}
            ),
            "d_suff": [L.d_suff[n] for n in P.ns],
            "d_suff / (n² log n)": [L.d_suff[n] / (n * n * math.log(n)) for n in P.ns],
            "fraction holding at d_suff": [at[at.n == n].holds.mean() for n in P.ns],
        }
    )


def d50_over_d_suff(P, L: Lemma33) -> list[float]:
    """``d_50 / d_suff`` per ``n`` (isotropic)."""
    return [L.d50[n] * n * n * math.log(n) / L.d_suff[n] for n in P.ns]


def assumption_holds_at_d_suff(P, R: Result) -> Claim:
    """The book's explicit Lemma 3.3: at ``d_suff`` each draw satisfies the assumption with
    probability at least ``1 - delta``, so every draw does (the chance that any of ``N``
    draws fails honestly is at most ``N delta``): the largest ``n / n_max`` over the draws at
    ``d_suff`` is at most 1. Fails for a ``d_suff`` that is too small."""
    at = R.lemma.at_suff
    return Claim(
        "assumption_holds_at_d_suff",
        "theorem",
        statement=D_SUFF,
        value=at.assumption_ratio.to_numpy(),
        bound=1.0,
        op="<=",
        detail=f"largest n / n_max over the {len(at)} draws at d_suff (at most 1: every "
        "draw satisfies the assumption)",
    )


def transition_inside_grid(P, R: Result) -> Claim:
    """``d_50`` lies inside the swept range of ``d`` for every ``n`` (sanity: the grid)."""
    d50 = R.lemma.d50
    return Claim(
        "transition_inside_grid",
        "sanity",
        holds=all(np.isfinite(d50[n]) for n in P.ns),
        detail="whether d_50 lies inside the swept range of d, for every n",
    )


def d50_below_d_suff(P, R: Result) -> Claim:
    """Half of the draws satisfy the assumption below ``d_suff``. Sanity: implied by
    :func:`assumption_holds_at_d_suff` (every draw holds at ``d_suff``, so the half point lies
    below it); kept for the number the page quotes."""
    return Claim(
        "d50_below_d_suff",
        "sanity",
        statement=D_SUFF,
        value=d50_over_d_suff(P, R.lemma),
        bound=1.0,
        op="<",
        detail="largest d_50 / d_suff over the n of the sweep (implied by "
        "assumption_holds_at_d_suff)",
    )


def norm_excess(rows: pd.DataFrame, delta: float, s: float) -> float:
    """The largest ``max_i | ||x_i|| - sqrt(d) |`` over the book's explicit bound
    (:func:`~twolayer.paper_a.assumptions.norm_deviation_bound`, failure probability ``delta``,
    ``s = ||Sigma||_2``), over the draws ``rows``."""
    return max(
        row.max_norm_dev / assumptions.norm_deviation_bound(row.n, row.d, delta, s)
        for row in rows.itertuples()
    )


def inner_product_excess(rows: pd.DataFrame, delta: float, s: float) -> float:
    """The largest ``p`` over the book's explicit bound times ``R_max``
    (:func:`~twolayer.paper_a.assumptions.inner_product_bound`), over the draws ``rows``."""
    return max(
        row.p / (assumptions.inner_product_bound(row.n, delta, s) * row.R_max)
        for row in rows.itertuples()
    )


def _draws(R: Result, kind: str) -> pd.DataFrame:
    sw = R.lemma.sweeps[kind].rows
    return pd.concat([sw, R.lemma.at_suff]) if kind == "isotropic" else sw


_NORMS_DETAIL = "largest max_i |‖x_i‖ − √d| over its explicit bound, over all draws"
_IP_DETAIL = "largest p over its explicit bound (× R_max), over all draws"
_NO_ANISO = "aniso = 0: this profile skips the anisotropic sweep"


def _norms_claim(P, R: Result, kind: str, name: str) -> Claim:
    if kind not in R.lemma.sweeps:
        value, applies = None, (False, _NO_ANISO)
    else:
        value, applies = norm_excess(_draws(R, kind), P.delta / 2, R.lemma.sweeps[kind].s), True
    # the explicit bound, held in every draw, is evidence for the paper's O(.) statement
    return Claim(
        name,
        "theorem",
        statement="a-lem-3-3#norms",
        value=value,
        bound=1.0,
        op="<=",
        applies=applies,
        detail=_NORMS_DETAIL,
    )


def _ip_claim(P, R: Result, kind: str, name: str) -> Claim:
    if kind not in R.lemma.sweeps:
        value, applies = None, (False, _NO_ANISO)
    else:
        value = inner_product_excess(_draws(R, kind), P.delta / 2, R.lemma.sweeps[kind].s)
        applies = True
    return Claim(
        name,
        "theorem",
        statement="a-lem-3-3#inner-products",
        value=value,
        bound=1.0,
        op="<=",
        applies=applies,
        detail=_IP_DETAIL,
    )


def norms_sqrt_d_plus_sqrt_log_n(P, R: Result) -> Claim:
    """The book's explicit Lemma 3.3 (norms): ``max_i | ||x_i|| - sqrt(d) | <= s/sqrt(d) +
    sqrt(2 s log(4n/delta))`` in every draw of the isotropic sweep and at ``d_suff``
    (``s = 1``, each bound with ``delta/2``). Fails for data with ``||Sigma||_2`` above the
    ``s`` used."""
    return _norms_claim(P, R, "isotropic", "norms_sqrt_d_plus_sqrt_log_n")


def inner_products_sqrt_d_log_n(P, R: Result) -> Claim:
    """The book's explicit Lemma 3.3 (inner products): ``p <= R_max sqrt(2 s log(2n(n-1)/
    delta))`` in every draw of the isotropic sweep and at ``d_suff``."""
    return _ip_claim(P, R, "isotropic", "inner_products_sqrt_d_log_n")


def norms_sqrt_d_plus_sqrt_log_n_anisotropic(P, R: Result) -> Claim:
    """:func:`norms_sqrt_d_plus_sqrt_log_n` for the anisotropic sweep (``s = 1 + aniso``);
    not applicable without one."""
    return _norms_claim(P, R, "anisotropic", "norms_sqrt_d_plus_sqrt_log_n_anisotropic")


def inner_products_sqrt_d_log_n_anisotropic(P, R: Result) -> Claim:
    """:func:`inner_products_sqrt_d_log_n` for the anisotropic sweep (``s = 1 + aniso``); not
    applicable without one."""
    return _ip_claim(P, R, "anisotropic", "inner_products_sqrt_d_log_n_anisotropic")


def resolves(P, ci) -> bool:
    """Whether a fit of the exponent can tell ``b = 1`` from ``b = 0``: three or more values of
    ``n`` and a finite 95% interval narrower than :data:`CI_WIDTH_MAX`."""
    return bool(len(P.ns) >= 3 and np.isfinite(ci).all() and ci[1] - ci[0] < CI_WIDTH_MAX)


def d50_needs_the_log_factor(P, R: Result) -> Claim:
    """The book's observation: ``d_50 ~ n^2 (log n)^b`` with ``b > 0`` (Lemma 3.3's ``log n``
    is there, not only ``n^2``), by the lower end of the 95% bootstrap interval, where the
    sweep resolves the exponent (:func:`resolves`)."""
    ci = R.lemma.ci
    return Claim(
        "d50_needs_the_log_factor",
        "observation",
        statement=LOG_FACTOR,
        value=ci[0],
        bound=0.0,
        op=">",
        applies=(
            resolves(P, ci),
            f"the sweep ({len(P.ns)} values of n, {P.draws} draws) cannot "
            f"resolve the exponent: 95% interval {np.round(ci, 2)}",
        ),
        detail="lower end of the 95% bootstrap interval of b in d_50 ∝ n²(log n)^b",
    )


def anisotropic_d50_needs_the_log_factor(P, R: Result) -> Claim:
    """:func:`d50_needs_the_log_factor` for the anisotropic sweep; not applicable without
    one."""
    ci = R.lemma.ci_aniso
    if ci is None:
        value, applies = None, (False, _NO_ANISO)
    else:
        value, applies = ci[0], (resolves(P, ci), f"95% interval {np.round(ci, 2)} too wide")
    return Claim(
        "anisotropic_d50_needs_the_log_factor",
        "observation",
        statement=LOG_FACTOR,
        value=value,
        bound=0.0,
        op=">",
        applies=applies,
        detail="lower end of the 95% bootstrap interval of b, anisotropic Σ",
    )


# --- everything -----------------------------------------------------------------------------------


@dataclass
class Result:
    """What the page computed, step by step (a step not yet run is ``None``)."""

    network: Network | None = None
    activations: Activations | None = None
    data: DataModels | None = None
    lemma: Lemma33 | None = None


def compute(P, *, device=None) -> Result:
    """Every step of the page, in its order (:func:`network`, :func:`activations_on_grid`,
    :func:`data_models`, :func:`lemma33`).

    Args:
        P: the validated parameters (``SPEC.params(...)`` or the page's ``contract.validate()``).
        device: where the tensors live (default: ``P.device``).

    Returns:
        a :class:`Result`.
    """
    return Result(
        network=network(P, device=device),
        activations=activations_on_grid(P, device=device),
        data=data_models(P),
        lemma=lemma33(P),
    )


NETWORK_CHECKS = (second_layer_fixed_signs, leaky_net_homogeneous, smoothed_net_not_homogeneous)
ACTIVATION_CHECKS = (
    smoothed_phi_zero_at_origin,
    smoothed_phi_gamma_leaky,
    smoothed_phi_quarter_smooth,
    smoothed_phi_derivative,
)
DATA_CHECKS = (gmm_bayes_error, gmm_bayes_error_unit_mean, xor_labels_even, xor_linear_error_half)
LEMMA_CHECKS = (
    assumption_holds_at_d_suff,
    transition_inside_grid,
    d50_below_d_suff,
    norms_sqrt_d_plus_sqrt_log_n,
    inner_products_sqrt_d_log_n,
    norms_sqrt_d_plus_sqrt_log_n_anisotropic,
    inner_products_sqrt_d_log_n_anisotropic,
)
SCALING_CHECKS = (d50_needs_the_log_factor, anisotropic_d50_needs_the_log_factor)


def claims(P, R: Result, checks) -> list[Claim]:
    """The claims of ``checks`` (one of the tuples above, in the page's order) on ``R``."""
    return [check(P, R) for check in checks]


# --- what the page says about its numbers ---------------------------------------------------------


def lemma_texts(P, R: Result) -> dict[str, str]:
    """The numbers the page's prose quotes after the sweep: the largest ``d_50 / d_suff``
    rounded up (so that "at most" is true as printed), ``d_50`` in units of ``n^2 log n`` and
    in absolute terms at the largest ``n``."""
    L = R.lemma
    frac_max = max(d50_over_d_suff(P, L))
    finite = [L.d50[n] for n in P.ns if np.isfinite(L.d50[n])]
    n_top = max(P.ns)
    return {
        "d50_fraction_max_text": f"{math.ceil(frac_max * 1000) / 1000:.3f}",
        "d50_units_text": f"{min(finite):.3g} to {max(finite):.3g}" if finite else "—",
        "d50_largest_n_text": (
            f"{L.d50[n_top] * n_top**2 * math.log(n_top):,.0f} for n = {n_top}"
            if np.isfinite(L.d50[n_top])
            else f"beyond the grid for n = {n_top}"
        ),
    }
