"""Chapter "One step to low rank" (``notebooks/paper_a/one_step_low_rank.md``): Theorem 4.2 of
Paper A, (A2) in the book's reading, the lemmas of Appendix E along gradient descent, where one
step to low rank stops as the initialization grows, and the stable rank while ``m``, ``d`` or
``n`` grows.

``SPEC`` declares the page's parameters once. The page narrates four steps, each a function
returning named fields, gathered in a :class:`Result` (:func:`compute` runs them all):

1. :func:`setup` -- the constructed data, their constants, the (A1) step, the book's (A2)
   bound and the derived bounds (:class:`Constants`);
2. :func:`main_runs` -- the main runs at (``init_scale``, ``lr_scale``) and the larger steps
   beyond (A1), in one batch (:class:`Runs`);
3. :func:`init_sweep` -- one step from initializations between the book's (A2) bound and the
   ``1/50`` bound (:class:`InitSweep`);
4. :func:`size_sweep` -- new data and initializations while one of ``m, d, n`` grows
   (:class:`SizeSweep`).

Hypotheses and checks are functions ``(P, R)`` returning a
:class:`~twolayer.page.checks.Hypothesis` or :class:`~twolayer.page.checks.Claim`, so that a
test can call them on an input where the statement is false
(``tests/failing_cases/paper_a_one_step_low_rank.py``). The experiments themselves live in
:mod:`twolayer.paper_a.onestep` and the bounds in :mod:`twolayer.paper_a.lowrank`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ...core import seeds
from ...core.device import default_device, resolve_dtype
from ...core.params import Choice, Constraint, Device, Float, Int, ListOf, Optional
from ...page.checks import Claim, Hypothesis, make_hypothesis
from ...page.contract import ChapterSpec
from .. import data, lowrank, onestep

__all__ = [
    "SPEC",
    "Constants",
    "Runs",
    "InitSweep",
    "SizeSweep",
    "Result",
    "setup",
    "main_runs",
    "init_sweep",
    "size_sweep",
    "compute",
]

#: the book's statements this page introduces (``prf`` blocks on the page)
ANY_STEP = "book-prop-any-step-rank"  # item 3's bound C at every step size (no (A1))
OBS_LADDER = "book-obs-one-step-ladder"  # larger steps beyond (A1): smaller losses
OBS_INIT_SWEEP = "book-obs-one-step-init-sweep"  # where one step to low rank stops

#: the rounding allowance of the checks whose ratio is exactly 1 at the edge (float64)
ROUNDING = 1e-12


def _rho(P):
    # rho = n p / R_min^2 of the constructed data (norms in [1, 1.2], so R = 1.2)
    C_R = 10 * 1.2**2 / P.gamma**2 + 10
    return P.data_ratio * P.gamma**2 / (5 * C_R * 1.2**2)


#: float64's range for the batch's larger steps: past a margin of about 709, ``exp(q)``
#: overflows and ``g_i = sigmoid(-q_i)`` is exactly 0; once every ``g_i`` is 0 the loss is 0 and
#: Lemma E.3's ratio ``||grad L|| / (R_max mean g)`` is 0/0, which stops the run. Every step of
#: the batch is kept so that its first step's smallest margin
#: (:func:`first_step_margin`) is at most this.
MARGIN_CAP = 500.0

#: the far larger step, in units of the main runs' step, where float64 allows it
LARGE_LR_SCALE = 1e8


def first_step_margin(P, lr_mult: float = 1.0) -> float:
    """The smallest margin ``y_k f(x_k; W1)`` after one step of ``lr_mult * lr_scale *
    alpha_A1`` from ``W = 0`` on the constructed data (at most; the initialization is at most
    ``eps`` of that step). From ``W = 0`` every ``w_j`` moves along ``a_j sum_i y_i x_i``, and
    with ``m/2`` neurons of each sign ``phi(z) - phi(-z) = (1 + gamma) z`` makes the margin
    exactly ``alpha (1 + gamma)^2 y_k <x_k, sum_i y_i x_i> / (8 n)``; the point of norm
    ``R_min = 1`` gives at most ``alpha (1 + gamma)^2 (1 + rho) / (8 n)``. The constants are the
    parameters' own (the norms are ``[1, 1.2]`` by construction), so a constraint can read it."""
    R_max = R = 1.2
    C_R = 10 * R**2 / P.gamma**2 + 10
    alpha_A1 = P.gamma**2 / (5 * P.n * R_max**2 * R**2 * C_R * max(1.0, onestep.H_SMOOTH))
    alpha = lr_mult * P.lr_scale * alpha_A1
    return alpha * (1 + P.gamma) ** 2 * (1 + _rho(P)) / (8 * P.n)


def _default_large_lr_scale(P) -> float:
    """``large_lr_scale = None``: :data:`LARGE_LR_SCALE`, or where float64 does not allow it the
    largest ``k 10^e`` (``k = 1..9``) whose first step's smallest margin stays at most
    :data:`MARGIN_CAP`."""
    cap = MARGIN_CAP / first_step_margin(P)
    if cap >= LARGE_LR_SCALE:
        return LARGE_LR_SCALE
    e = math.floor(math.log10(cap))
    return float(math.floor(cap / 10**e) * 10**e)


SPEC = ChapterSpec(
    chapter="paper_a/one_step_low_rank",
    spec={
        "device": Device(
            doc='where the tensors live; "auto": CUDA when present, else the CPU',
            fixed="machinery: where the tensors live, not the mathematics",
        ),
        "dtype": Choice(
            "float64",
            "float32",
            doc="floating-point type (float64 only here)",
            fixed="float64 only on this page (a constraint: its checks were verified in float64)",
        ),
        "n": Int(2, 2000, explore=(4, 16), doc="training points"),
        "d": Int(2, 10**6, explore=(100, 2000), doc="input dimension (at least n)"),
        "m": Int(
            2,
            10**5,
            explore=(10, 100),
            doc="neurons: m - m//2 with a_j = +1/sqrt(m), m//2 with -1/sqrt(m)",
        ),
        "gamma": Float(
            0,
            1,
            lo_open=True,
            hi_open=True,
            explore=(0.2, 0.95),
            doc="leak of the smoothed leaky ReLU",
        ),
        "init_scale": Float(
            0,
            None,
            lo_open=True,
            explore=(0.1, 1000.0),
            doc="initialization std of the main runs, in units of the "
            "book's (A2) bound (above 1: (A2) fails)",
        ),
        "lr_scale": Float(
            0,
            None,
            lo_open=True,
            explore=(0.5, 20.0),
            doc="step size of the main runs, in units of the (A1) bound (above 1: (A1) fails)",
        ),
        "steps": Int(1, 10**7, explore=(50, 2000), doc="gradient-descent steps of the main runs"),
        "draws": Int(1, 256, explore=(1, 8), doc="random initializations of the main runs"),
        "eps": Float(
            0,
            0.5,
            lo_open=True,
            hi_open=True,
            explore=(0.01, 0.3),
            doc="(A2): the initialization is at most eps times the first step",
        ),
        "delta": Float(
            0,
            0.1,
            lo_open=True,
            explore=(1e-6, 1e-2),
            doc="failure probability allowed to the concentration bounds",
        ),
        "data_ratio": Float(
            0,
            None,
            lo_open=True,
            explore=(0.1, 100.0),
            doc="the constructed data's value of Theorem 4.2's data "
            "condition (at most 1: it holds)",
        ),
        "lr_ladder": ListOf(
            Float(1, None, lo_open=True),
            increasing=True,
            explore=[[1e2, 1e4], [1e4, 1e6], [1e2, 1e4, 1e6]],
            doc="larger step sizes, in units of the main runs' (beyond (A1))",
        ),
        "large_lr_scale": Optional(
            Float(1, None, lo_open=True),
            explore=(1e7, 1e8),
            doc="a step size far beyond (A1), in the same units (None: 1e8, lowered where its "
            "first step would push every margin past float64's range)",
        ),
        "init_sweep_points": Int(
            3,
            200,
            explore=(4, 26),
            doc="initialization scales from the book's (A2) bound up to the 1/50 bound",
        ),
        "sweep_ms": ListOf(
            Int(2, 10**5),
            min_len=2,
            increasing=True,
            explore=[[5, 20, 80], [10, 40, 160, 640]],
            doc="neurons of the sweep over m (at d, n)",
        ),
        "sweep_ds": ListOf(
            Int(2, 10**6),
            min_len=2,
            increasing=True,
            explore=[[50, 200, 800], [100, 400, 1600, 6400]],
            doc="dimensions of the sweep over d (at m, n)",
        ),
        "sweep_ns": ListOf(
            Int(2, 2000),
            min_len=2,
            increasing=True,
            explore=[[3, 6, 12], [4, 8, 16, 32]],
            doc="sample sizes of the sweep over n (at m, d)",
        ),
        "sweep_steps": Int(1, 10**5, explore=(5, 60), doc="steps of each run of the size sweeps"),
        "sweep_lr_scale": Float(
            1,
            None,
            explore=(1e3, 1e5),
            doc="step size of the size sweeps' longer run, in units of the (A1) bound",
        ),
    },
    defaults={
        "seed": 0,
        "profile": None,
        "results_path": None,
        "device": "auto",
        "dtype": "float64",
        "n": None,
        "d": None,
        "m": None,
        "gamma": 0.5,
        "init_scale": 1.0,
        "lr_scale": 1.0,
        "steps": None,
        "draws": None,
        "eps": 0.05,
        "delta": 1e-3,
        "data_ratio": 0.5,
        "lr_ladder": None,
        "large_lr_scale": None,
        "init_sweep_points": None,
        "sweep_ms": None,
        "sweep_ds": None,
        "sweep_ns": None,
        "sweep_steps": None,
        "sweep_lr_scale": None,
    },
    profiles={
        "smoke": {
            "n": 6,
            "d": 200,
            "m": 20,
            "steps": 100,
            "draws": 2,
            "lr_ladder": [1e4, 1e6],
            "init_sweep_points": 7,
            "sweep_ms": [5, 20, 80],
            "sweep_ds": [50, 200, 800],
            "sweep_ns": [3, 6, 12],
            "sweep_steps": 10,
            "sweep_lr_scale": 1e4,
        },
        "book": {
            "n": 10,
            "d": 1000,
            "m": 50,
            "steps": 1000,
            "draws": 4,
            "lr_ladder": [1e2, 1e4, 1e6],
            "init_sweep_points": 13,
            "sweep_ms": [10, 40, 160, 640],
            "sweep_ds": [100, 400, 1600, 6400],
            "sweep_ns": [4, 8, 16, 32],
            "sweep_steps": 30,
            "sweep_lr_scale": 1e4,
        },
        "paper": {
            "n": 20,
            "d": 4000,
            "m": 100,
            "steps": 10000,
            "draws": 8,
            "lr_ladder": [1e2, 1e4, 1e6],
            "init_sweep_points": 25,
            "sweep_ms": [10, 40, 160, 640, 2560],
            "sweep_ds": [100, 400, 1600, 6400, 25600],
            "sweep_ns": [4, 8, 16, 32, 64],
            "sweep_steps": 100,
            "sweep_lr_scale": 1e4,
        },
    },
    derive={"large_lr_scale": _default_large_lr_scale},
    constraints=[
        Constraint(
            "dtype",
            lambda P: P.dtype == "float64",
            'must be "float64" on this page: its checks (margins increasing '
            "step by step, Fact E.7's and Lemma E.3's ratios against their "
            "bounds) were verified in float64 only",
        ),
        Constraint("d", lambda P: P.d >= P.n, "must be at least n"),
        Constraint("sweep_ds", lambda P: P.sweep_ds[0] >= P.n, "must start at n or above"),
        Constraint("sweep_ns", lambda P: P.sweep_ns[-1] <= P.d, "must stay at or below d"),
        Constraint(
            "data_ratio",
            lambda P: _rho(P) < 1,
            "must keep rho = n p / R_min^2 below 1 (the points must stay linearly independent)",
        ),
        Constraint(
            "lr_ladder",
            lambda P: first_step_margin(P, P.lr_ladder[-1]) <= MARGIN_CAP,
            "must keep its largest step's first margins within float64's range: "
            "lr_scale * lr_ladder[-1] * alpha_A1 (1 + gamma)^2 (1 + rho) / (8 n) at most 500 "
            "(past about 709 every g_i = sigmoid(-q_i) is 0 and Lemma E.3's ratio is 0/0)",
        ),
        Constraint(
            "large_lr_scale",
            lambda P: P.large_lr_scale > P.lr_ladder[-1],
            "must be larger than the last step of lr_ladder",
        ),
        Constraint(
            "large_lr_scale",
            lambda P: first_step_margin(P, P.large_lr_scale) <= MARGIN_CAP,
            "must keep its first margins within float64's range: lr_scale * large_lr_scale * "
            "alpha_A1 (1 + gamma)^2 (1 + rho) / (8 n) at most 500 (past about 709 every "
            "g_i = sigmoid(-q_i) is 0 and Lemma E.3's ratio is 0/0); None gives the largest "
            "such value up to 1e8",
        ),
    ],
)


def _where(P, device, dtype):
    """The device and dtype of the runs: ``P.device`` and ``P.dtype`` unless given."""
    return (
        default_device(P.device) if device is None else device,
        resolve_dtype(P.dtype) if dtype is None else dtype,
    )


# --- step 1: the data, the constants and the bounds -------------------------------------------


@dataclass
class Constants:
    """The page's data and every constant of Theorem 4.2 at them (step 1, :func:`setup`).

    Attributes:
        problem: the constructed data, the network, ``alpha_A1``, ``alpha``,
            ``||grad L(0)||_F`` and the book's (A2) bound (:class:`onestep.Setup`).
        omega: the initialization std of the main runs, ``init_scale * omega_A2``.
        gauss: Theorem 4.2's constants of Gaussian data at the same ``n``, ``d``.
        C_step1: ``((1 + eps)/(1 - eps))^2``, the stable rank after one step under (A2).
        C_traj: the book's bound ``C`` on the stable rank for ``t >= 1``.
        sr_law: ``m d / (sqrt m + sqrt d)^2``, the stable rank of a Gaussian matrix.
        sr_lower: the concentration lower bound on it (probability ``1 - delta``).
        smoothness: ``beta = R_max^2 (1/4 + H / sqrt m)``, the risk's smoothness.
        mu: the proxy-PL constant.
        kappa: the guaranteed growth of ``1/L`` per step under (A1) (item 1's rate).
    """

    problem: onestep.Setup
    omega: float
    gauss: lowrank.DataConstants
    C_step1: float
    C_traj: float
    sr_law: float
    sr_lower: float
    smoothness: float
    mu: float
    kappa: float

    @property
    def consts(self) -> lowrank.DataConstants:
        return self.problem.consts


def setup(P) -> Constants:
    """Step 1: data satisfying Theorem 4.2's data condition at ratio ``data_ratio``
    (:func:`twolayer.paper_a.lowrank.constructed_data`), the (A1) step bound, the step
    ``alpha = lr_scale * alpha_A1``, the book's (A2) bound at that step, Gaussian data's
    constants for comparison, and the derived bounds of the page.

    Args:
        P: the validated parameters.

    Returns:
        a :class:`Constants`.
    """
    S = onestep.setup(
        P.n,
        P.d,
        P.m,
        P.gamma,
        seed=seeds.derive(P.seed, "data"),
        data_ratio=P.data_ratio,
        lr_scale=P.lr_scale,
        eps=P.eps,
        delta=P.delta,
    )
    gauss = lowrank.data_constants(
        data.nearly_orthogonal(P.n, P.d, seed=seeds.derive(P.seed, "gaussian")).X,
        P.gamma,
        onestep.H_SMOOTH,
    )
    beta_s, mu = lowrank.smoothness(S.consts, P.m), lowrank.proxy_pl_constant(S.consts)
    return Constants(
        problem=S,
        omega=P.init_scale * S.omega_A2,
        gauss=gauss,
        C_step1=lowrank.step1_bound(P.eps),
        C_traj=lowrank.trajectory_bound(P.gamma, S.consts.rho, P.eps),
        sr_law=lowrank.gaussian_stable_rank(P.m, P.d),
        sr_lower=lowrank.gaussian_stable_rank_lower(P.m, P.d, P.delta),
        smoothness=beta_s,
        mu=mu,
        kappa=lowrank.risk_rate(S.alpha, beta_s, mu),
    )


# --- step 2: the main runs and the larger steps -------------------------------------------------


@dataclass
class Runs:
    """The main runs and the larger steps, one batch (step 2, :func:`main_runs`).

    Attributes:
        kind: ``"main"`` (``draws`` runs at ``lr_scale``) or ``"large step"`` (each of
            ``lr_ladder``, then ``large_lr_scale``), per run.
        lr_mult: each run's step over the main runs' step ``alpha``.
        batch: the runs' records (:class:`onestep.BatchResult`): ``history[name]`` has one row
            per recorded step (``batch.steps``) and one column per run.
    """

    kind: np.ndarray
    lr_mult: np.ndarray
    batch: onestep.BatchResult

    @property
    def main(self) -> np.ndarray:
        return self.kind == "main"

    @property
    def ladder(self) -> np.ndarray:
        """Indices of the larger steps, in increasing order (the last: ``large_lr_scale``)."""
        return np.flatnonzero(self.kind == "large step")

    @property
    def history(self) -> dict:
        return self.batch.history

    @property
    def steps(self) -> np.ndarray:
        return self.batch.steps

    @property
    def sr(self) -> np.ndarray:
        """Stable rank, ``(records, runs)``."""
        return self.batch.history["stable_rank"]

    def table(self, P):
        """The runs' table (pandas): at initialization and after one step, then along the run."""
        import pandas as pd

        h, sr = self.history, self.sr
        return pd.DataFrame(
            {
                "run": self.kind,
                "alpha / alpha_A1": self.lr_mult * P.lr_scale,
                "max |f(x;W0)|": self.batch.realized["f_max"],
                "init / first step": self.batch.realized["step_ratio"],
                "SR(0)": sr[0],
                "SR(1)": sr[1],
                "max SR(t>=1)": sr[1:].max(axis=0),
                "final loss": h["loss"][-1],
                "max g_i/g_j": np.exp(np.minimum(h["log_loss_ratio"].max(axis=0), 700)),
            }
        )


def main_runs(P, C: Constants, *, device=None, dtype=None) -> Runs:
    """Step 2: ``draws`` main runs at ``omega = init_scale * omega_A2`` and step
    ``alpha = lr_scale * alpha_A1``, and one run at each larger step (``lr_ladder``, then
    ``large_lr_scale``, in units of ``alpha``), ``steps`` steps each, recording at 30
    log-spaced steps the stable rank, Lemma E.4's loss ratio, every margin (Lemma E.11),
    Fact E.7's Gram ratios and Lemma E.3's gradient ratio.

    Args:
        P: the validated parameters.
        C: step 1's :class:`Constants`.
        device, dtype: where the runs live (default: ``P.device``, ``P.dtype``).

    Returns:
        a :class:`Runs`.
    """
    device, dtype = _where(P, device, dtype)
    kind = np.array(["main"] * P.draws + ["large step"] * (len(P.lr_ladder) + 1))
    lr_mult = np.array([1.0] * P.draws + list(P.lr_ladder) + [P.large_lr_scale])
    B = onestep.run_batch(
        C.problem,
        np.full(kind.size, C.omega),
        C.problem.alpha * lr_mult,
        steps=P.steps,
        seed=seeds.derive(P.seed, "init"),
        records=30,
        eps=P.eps,
        device=device,
        dtype=dtype,
    )
    return Runs(kind=kind, lr_mult=lr_mult, batch=B)


def risk_guarantee(C: Constants, runs: Runs) -> np.ndarray:
    """The book's guaranteed risk under (A1) at the recorded steps ``t >= 1``, from the
    largest risk of the main runs after step 1 (the figure's dashed line)."""
    t1 = runs.steps >= 1
    return lowrank.risk_bound(runs.history["loss"][t1][0, runs.main].max(), runs.steps[t1], C.kappa)


def risk_rate_ratio(C: Constants, runs: Runs) -> np.ndarray:
    """``L(t) / (1/(1/L(1) + kappa (t - 1)))`` of each main run at the recorded steps
    ``t >= 1``, shape ``(records with t >= 1, main runs)``: 1 at ``t = 1`` by construction."""
    t1 = runs.steps >= 1
    loss_t1 = runs.history["loss"][t1][:, runs.main]
    return loss_t1 / lowrank.risk_bound(loss_t1[0], runs.steps[t1][:, None], C.kappa)


# --- step 3: one step from larger initializations -----------------------------------------------


@dataclass
class InitSweep:
    """One step from initializations between ``omega_A2`` and ``omega_f`` (step 3,
    :func:`init_sweep`); one entry per run (``2`` draws per scale).

    Attributes:
        multipliers: the scales swept, in units of ``omega_A2``.
        multiplier, omega: each run's scale (in units of ``omega_A2``, and absolute).
        r: ``||W0||_F / (alpha ||grad L(W0)||_F)``: the initialization against the first step.
        sr0, sr1: the stable rank at initialization and after one step.
        lower: the triangle-inequality lower bound on ``sr1``.
        a2_holds: whether the realized (A2) holds.
    """

    multipliers: np.ndarray
    multiplier: np.ndarray
    omega: np.ndarray
    r: np.ndarray
    sr0: np.ndarray
    sr1: np.ndarray
    lower: np.ndarray
    a2_holds: np.ndarray

    def frame(self):
        """The runs as a DataFrame (pandas), one row per run."""
        import pandas as pd

        return pd.DataFrame(
            {
                k: getattr(self, k)
                for k in ("multiplier", "omega", "r", "sr0", "sr1", "lower", "a2_holds")
            }
        )

    def by_init(self):
        """Mean multiplier, ``r``, ``sr0`` and ``sr1`` per initialization scale (pandas)."""
        return self.frame().groupby("omega")[["multiplier", "r", "sr0", "sr1"]].mean()

    @property
    def at_f(self) -> np.ndarray:
        """The runs at the largest scale swept (the ``1/50`` bound ``omega_f``)."""
        return self.multiplier == self.multiplier.max()


def init_sweep(P, C: Constants, *, device=None, dtype=None) -> InitSweep:
    """Step 3: one step of size ``alpha`` from ``init_sweep_points`` scales geometrically
    spaced from ``omega_A2`` up to ``omega_f`` (at least ``10 omega_A2``), two draws each.

    Args:
        P: the validated parameters.
        C: step 1's :class:`Constants`.
        device, dtype: where the runs live (default: ``P.device``, ``P.dtype``).

    Returns:
        an :class:`InitSweep`.
    """
    device, dtype = _where(P, device, dtype)
    S = C.problem
    mults = np.geomspace(1.0, max(S.bound.omega_f / S.omega_A2, 10.0), P.init_sweep_points)
    sw = onestep.init_sweep(
        S,
        mults,
        draws=2,
        seed=seeds.derive(P.seed, "init-sweep"),
        eps=P.eps,
        device=device,
        dtype=dtype,
    )
    return InitSweep(multipliers=mults, **sw)


# --- step 4: the sizes --------------------------------------------------------------------------


@dataclass
class SizeSweep:
    """New data and initializations at each size while one of ``m, d, n`` grows (step 4,
    :func:`size_sweep`).

    Attributes:
        rows: one row per run (pandas DataFrame, the columns of
            :func:`twolayer.paper_a.onestep.size_sweep`): ``kind`` "one step" (two runs per
            size, one step of ``lr_scale * alpha_A1``) or "trajectory" (one run per size,
            ``sweep_steps`` steps of ``sweep_lr_scale * alpha_A1``).
    """

    rows: object

    @property
    def one(self):
        return self.rows[self.rows.kind == "one step"]

    @property
    def long(self):
        return self.rows[self.rows.kind == "trajectory"]

    def summary(self):
        """Per size: mean ``SR(0)``, law and ``SR(1)`` of the one-step runs; the largest
        ``max SR(t>=1)`` and final loss of the larger step (pandas)."""
        keys = ["swept", "n", "d", "m"]
        one, long = self.one, self.long
        out = one.groupby(keys)[["SR(0)", "law", "SR(1)"]].mean()
        out["max SR(t>=1), larger step"] = long.groupby(keys)["max SR(t>=1)"].max()
        out["final loss, larger step"] = long.groupby(keys)["final loss"].max()
        return out


def size_sweep(P, *, device=None, dtype=None) -> SizeSweep:
    """Step 4: for each value of ``sweep_ms``, ``sweep_ds``, ``sweep_ns`` (the other sizes at
    the page's), new constructed data and initializations at ``init_scale`` times that size's
    (A2) bound (:func:`twolayer.paper_a.onestep.size_sweep`).

    Args:
        P: the validated parameters.
        device, dtype: where the runs live (default: ``P.device``, ``P.dtype``).

    Returns:
        a :class:`SizeSweep`.
    """
    import pandas as pd

    device, dtype = _where(P, device, dtype)
    rows = onestep.size_sweep(
        {"m": P.sweep_ms, "d": P.sweep_ds, "n": P.sweep_ns},
        {"n": P.n, "d": P.d, "m": P.m},
        P.gamma,
        seed=seeds.derive(P.seed, "size-sweep"),
        lr_scale=P.lr_scale,
        draws=2,
        long_lr_scale=P.sweep_lr_scale,
        long_steps=P.sweep_steps,
        data_ratio=P.data_ratio,
        init_scale=P.init_scale,
        eps=P.eps,
        delta=P.delta,
        device=device,
        dtype=dtype,
    )
    return SizeSweep(rows=pd.DataFrame(rows))


# --- everything ---------------------------------------------------------------------------------


@dataclass
class Result:
    """What the page computed, step by step (a step not yet run is ``None``)."""

    setup: Constants | None = None
    runs: Runs | None = None
    sweep: InitSweep | None = None
    sizes: SizeSweep | None = field(default=None)


def compute(P, *, device=None, dtype=None) -> Result:
    """Every step of the page, in its order (:func:`setup`, :func:`main_runs`,
    :func:`init_sweep`, :func:`size_sweep`).

    Args:
        P: the validated parameters (``SPEC.params(...)`` or the page's ``contract.validate()``).
        device, dtype: where the runs live (default: ``P.device``, ``P.dtype``).

    Returns:
        a :class:`Result`.
    """
    C = setup(P)
    return Result(
        setup=C,
        runs=main_runs(P, C, device=device, dtype=dtype),
        sweep=init_sweep(P, C, device=device, dtype=dtype),
        sizes=size_sweep(P, device=device, dtype=dtype),
    )


# --- hypotheses ---------------------------------------------------------------------------------


def thm42_data_condition(P, R: Result) -> Hypothesis:
    """Theorem 4.2's data condition (reconstructed), ``R_min^2 >= 5 gamma^-2 C_R R^2 n p``, as
    the ratio of the two sides (at most 1)."""
    return make_hypothesis(
        "thm42_data_condition",
        title="Theorem 4.2's data condition",
        statement="a-thm-4-2",
        value=R.setup.consts.condition_ratio,
        bound=1.0,
        op="<=",
        reason="data_ratio is above 1: the data are not orthogonal enough",
        detail="the data condition's ratio (at most 1 under Theorem 4.2)",
    )


def thm42_A1(P, R: Result) -> Hypothesis:
    """(A1): the step size is at most ``alpha_A1`` (``lr_scale <= 1``)."""
    return make_hypothesis(
        "thm42_A1",
        title="(A1)",
        statement="a-thm-4-2",
        value=P.lr_scale,
        bound=1.0,
        op="<=",
        reason="the step size is larger than the (A1) bound",
        detail="step size α over the (A1) bound α_A1 (lr_scale)",
    )


def thm42_A2(P, R: Result) -> Hypothesis:
    """(A2) in the book's reading: the initialization std is at most ``omega_A2``."""
    return make_hypothesis(
        "thm42_A2",
        title="(A2), the book's reading",
        statement="a-thm-4-2",
        value=P.init_scale,
        bound=1.0,
        op="<=",
        reason="the initialization is larger than the book's (A2) bound",
        detail="initialization scale ω over the book's (A2) bound ω_A2 (init_scale)",
    )


def lem_e11c_condition(P, R: Result) -> Hypothesis:
    """Lemma E.11(c)'s condition ``||x_k||^2 >= 8 gamma^-2 n max_{i != k} |<x_i, x_k>|``,
    checked with ``R_min`` and ``p``."""
    c = R.setup.consts
    return make_hypothesis(
        "lem_e11c_condition",
        title="Lemma E.11(c)'s condition",
        statement="a-lem-e-11",
        value=8 * c.n * c.p / (P.gamma**2 * c.R_min**2),
        bound=1.0,
        op="<=",
        reason="R_min^2 < 8 n p / gamma^2",
        detail="8 n p / (γ² R_min²)",
    )


def book_trajectory_bound_finite(P, R: Result) -> Hypothesis:
    """The book's bound ``C`` on the stable rank for ``t >= 1`` is finite (``rho < 1`` and
    ``eta < 1``)."""
    C_traj = R.setup.C_traj
    return make_hypothesis(
        "book_trajectory_bound_finite",
        title="the book's bound C",
        statement="a-thm-4-2",
        holds=math.isfinite(C_traj),
        value=C_traj,
        reason="rho >= 1 or eta >= 1 (eps too large for gamma): C is infinite",
        detail="the book's bound C on the stable rank for t ≥ 1",
    )


def hypotheses(P, R: Result) -> list[Hypothesis]:
    """Every hypothesis of the page, in its order."""
    return [
        thm42_data_condition(P, R),
        thm42_A1(P, R),
        thm42_A2(P, R),
        lem_e11c_condition(P, R),
        book_trajectory_bound_finite(P, R),
    ]


def _thm42(P, R) -> list[Hypothesis]:
    return [thm42_data_condition(P, R), thm42_A1(P, R), thm42_A2(P, R)]


# --- checks of step 1 ---------------------------------------------------------------------------


def condition_tolerance(P, R: Result) -> float:
    """The rounding allowance of :func:`constructed_data_condition`: the constructed points'
    inner products carry an absolute rounding of about ``(d + n) u R_max^2`` (``u`` float64's
    unit roundoff; the square root of the Gram matrix and the orthonormal frame in ``R^d``),
    relative to the cross term ``p`` that the condition ratio is proportional to; ``1e-9`` where
    that is smaller. ``p`` shrinks like ``gamma^4`` (about ``1e-6`` at ``gamma = 0.2``), where
    the allowance grows to a few ``1e-8``."""
    c = R.setup.consts
    u = np.finfo(np.float64).eps / 2
    return max(1e-9, (P.d + P.n) * u * c.R_max**2 / c.p)


def constructed_data_condition(P, R: Result) -> Claim:
    """Sanity: the constructed data have the requested condition ratio (by construction), up to
    rounding (:func:`condition_tolerance`)."""
    return Claim(
        "constructed_data_condition",
        "sanity",
        value=abs(R.setup.consts.condition_ratio / P.data_ratio - 1),
        bound=condition_tolerance(P, R),
        op="<=",
        detail="relative gap of the data's condition ratio to data_ratio",
    )


# --- checks of step 2 ---------------------------------------------------------------------------


def init_spectral_norm_E1(P, R: Result) -> Claim:
    """Lemma E.1 (the book's form): ``||W0||_2 <= omega (sqrt m + sqrt d + t)``,
    ``t = sqrt(2 log(2/delta))``, with probability ``1 - delta``; every run of the batch is
    held to it (value: the largest ratio).

    Args:
        P: the parameters (``m``, ``d``, ``delta``).
        R: a :class:`Result` with ``runs``.

    Returns:
        the theorem check.
    """
    B = R.runs.batch
    t_conc = math.sqrt(2 * math.log(2 / P.delta))
    return Claim(
        "init_spectral_norm_E1",
        "theorem",
        statement="a-lem-e-1",
        value=B.spectral0 / (B.omega * (math.sqrt(P.m) + math.sqrt(P.d) + t_conc)),
        bound=1.0,
        op="<=",
        detail="largest ‖W0‖₂ / (ω (√m + √d + t)) over every run of the batch",
    )


def init_stable_rank_lower_bound(P, R: Result) -> Claim:
    """Section 4, the stable rank at a Gaussian initialization, its lower half: with
    probability ``1 - delta``, ``StableRank(W0) >= (sqrt(md) - 1 - t)^2 / (sqrt m + sqrt d +
    t)^2`` (:func:`twolayer.paper_a.lowrank.gaussian_stable_rank_lower`). It fails for an
    initialization of low rank (a rank-one ``W0`` has stable rank 1).

    Returns:
        the theorem check, on the smallest ``SR(0)`` over every run of the batch.
    """
    return Claim(
        "init_stable_rank_lower_bound",
        "theorem",
        statement="a-sec-4#init-stable-rank",
        value=R.runs.sr[0],
        bound=R.setup.sr_lower,
        op=">=",
        detail="smallest SR(0) over all runs, against its concentration lower bound",
    )


def init_stable_rank_at_most_min_md(P, R: Result) -> Claim:
    """Sanity: ``StableRank(W0) <= rank(W0) <= min(m, d)`` holds for every matrix."""
    return Claim(
        "init_stable_rank_at_most_min_md",
        "sanity",
        statement="a-sec-4#init-stable-rank",
        value=R.runs.sr[0],
        bound=float(min(P.m, P.d)),
        op="<=",
        detail="largest SR(0) over all runs against min(m, d) (true of every matrix)",
    )


def init_stable_rank_order_min_md(P, R: Result) -> Claim:
    """Sanity: ``md/(sqrt m + sqrt d)^2 >= min(m, d)/4`` for every ``m, d`` (a tautology)."""
    return Claim(
        "init_stable_rank_order_min_md",
        "sanity",
        value=R.setup.sr_law / min(P.m, P.d),
        bound=0.25,
        op=">=",
        detail="md / (√m + √d)² over min(m, d)",
    )


def A2_realised(P, R: Result) -> Claim:
    """Sanity: the realized (A2) of the main runs, guaranteed with probability ``1 - delta``
    by the book's concentration bounds once ``omega <= omega_A2`` (built into (A2))."""
    return Claim(
        "A2_realised",
        "sanity",
        applies=thm42_A2(P, R),
        value=R.runs.batch.realized["step_ratio"][R.runs.main],
        bound=P.eps,
        op="<=",
        detail="largest (‖W0‖_F + α‖∇L(W0) − ∇L(0)‖_F) / (α‖∇L(0)‖_F), main runs",
    )


def f_init_at_most_1_50(P, R: Result) -> Claim:
    """Lemma E.11(a), ``|f(x_k; W0)| <= 1/50``. Sanity, not evidence: the book's (A2) bound
    ``omega_A2 <= omega_f`` is chosen so that it holds with probability ``1 - delta``
    (:func:`twolayer.paper_a.lowrank.init_bound`), the same concentration argument as
    :func:`A2_realised`."""
    return Claim(
        "f_init_at_most_1_50",
        "sanity",
        statement="a-lem-e-11#a",
        applies=thm42_A2(P, R),
        value=R.runs.batch.realized["f_max"][R.runs.main],
        bound=1 / 50,
        op="<=",
        detail="largest max_k |f(x_k; W0)| over the main runs (built into (A2))",
    )


def step1_stable_rank_bound(P, R: Result) -> Claim:
    """Sanity: after one step, ``StableRank(W1) <= ((1 + eps)/(1 - eps))^2``, a consequence of
    the realized (A2) and the triangle inequality."""
    return Claim(
        "step1_stable_rank_bound",
        "sanity",
        statement="a-thm-4-2#3",
        applies=thm42_A2(P, R),
        value=R.runs.sr[1][R.runs.main],
        bound=R.setup.C_step1,
        op="<=",
        detail="largest stable rank after one step, over the main runs",
    )


def trajectory_stable_rank_bound(P, R: Result) -> Claim:
    """Theorem 4.2, item 3, with the book's constant: ``StableRank(W_t) <= C`` for every
    ``t >= 1`` (main runs, where the data condition, (A1), (A2) hold and ``C`` is finite).

    Returns:
        the theorem check, on the largest recorded stable rank at ``t >= 1``.
    """
    main = R.runs.main
    return Claim(
        "trajectory_stable_rank_bound",
        "theorem",
        statement="a-thm-4-2#3",
        applies=_thm42(P, R) + [book_trajectory_bound_finite(P, R)],
        value=R.runs.sr[1:, main],
        bound=R.setup.C_traj,
        op="<=",
        detail="largest stable rank at recorded steps t ≥ 1, main runs",
    )


def interpolates_from_step1(P, R: Result) -> Claim:
    """Lemma E.11(c): under its condition, (A1) and (A2), every training point is classified
    correctly from step 1 on (every margin ``y_k f(x_k; W_t)`` positive at ``t >= 1``)."""
    main = R.runs.main
    return Claim(
        "interpolates_from_step1",
        "theorem",
        statement="a-lem-e-11#c",
        applies=[lem_e11c_condition(P, R), thm42_A1(P, R), thm42_A2(P, R)],
        value=R.runs.history["min_margin"][1:, main],
        bound=0.0,
        op=">",
        detail="smallest margin y_k f(x_k) at recorded steps t ≥ 1, main runs",
    )


def margins_increase(P, R: Result) -> Claim:
    """Lemma E.11(b): every unnormalized margin ``y_k f(x_k; W_t)`` increases along gradient
    descent (main runs, between consecutive recorded steps)."""
    main = R.runs.main
    return Claim(
        "margins_increase",
        "theorem",
        statement="a-lem-e-11#b",
        applies=_thm42(P, R),
        value=np.diff(R.runs.history["margins"][:, main], axis=0),
        bound=0.0,
        op=">",
        detail="smallest change of a margin between recorded steps, main runs",
    )


def loss_ratio_bound_E4(P, R: Result) -> Claim:
    """Lemma E.4, ``max_{i,j} g_i/g_j <= C_R``. Sanity, not evidence: under (A1) the margins
    move by about ``1e-6`` over the run (every ``g_i`` stays within ``1e-4`` of ``1/2``), so
    the ratio stays near 1 and the bound ``C_R`` (about 68 here) cannot bind; the page reads
    the lemma where it matters, beyond (A1), as a measured number."""
    return Claim(
        "loss_ratio_bound_E4",
        "sanity",
        statement="a-lem-e-4",
        applies=_thm42(P, R),
        value=R.runs.history["log_loss_ratio"][:, R.runs.main],
        bound=math.log(R.setup.consts.C_R),
        op="<=",
        detail="largest log max_ij g_i/g_j over recorded steps, main runs (cannot bind)",
    )


def gradient_persistence_E7(P, R: Result) -> Claim:
    """Fact E.7, persistence ``||grad f_i||_F^2 >= gamma^2 ||x_i||^2``. Sanity, not evidence:
    ``grad f_i = (a * phi'(W x_i)) x_i^T`` with ``phi' >= gamma`` and ``||a|| = 1`` gives it
    for every ``W`` (1e-12: float64 rounding)."""
    return Claim(
        "gradient_persistence_E7",
        "sanity",
        statement="a-fact-e-7",
        value=R.runs.history["fact_e7"][..., 0],
        bound=1 - ROUNDING,
        op=">=",
        detail="smallest min_i ‖∇f_i‖² / (γ ‖x_i‖)², every run and recorded step "
        "(true for every W: φ′ ≥ γ)",
    )


def near_orthogonal_gradients_E7(P, R: Result) -> Claim:
    """Fact E.7, ``|<grad f_i, grad f_k>| <= |<x_i, x_k>|``. Sanity, not evidence:
    ``sum_j a_j^2 phi'_ij phi'_kj <= 1`` for ``phi' <= 1`` and ``||a|| = 1``, for every ``W``."""
    return Claim(
        "near_orthogonal_gradients_E7",
        "sanity",
        statement="a-fact-e-7",
        value=R.runs.history["fact_e7"][..., 1],
        bound=1 + ROUNDING,
        op="<=",
        detail="largest max_{i≠k} |⟨∇f_i, ∇f_k⟩| / |⟨x_i, x_k⟩|, every run and step "
        "(true for every W: φ′ ≤ 1)",
    )


def gradient_bound_E3(P, R: Result) -> Claim:
    """Lemma E.3, ``||grad L(W)||_F <= R_max (1/n) sum_i g_i``. Sanity, not evidence: the
    triangle inequality with ``||grad f_i||_F <= ||x_i||`` (``phi' <= 1``, ``||a|| = 1``)
    gives it for every ``W``."""
    return Claim(
        "gradient_bound_E3",
        "sanity",
        statement="a-lem-e-3",
        value=R.runs.history["grad_bound_e3"],
        bound=1 + ROUNDING,
        op="<=",
        detail="largest ‖∇L(W)‖_F / (R_max mean_i g_i), every run and recorded step "
        "(true for every W: φ′ ≤ 1)",
    )


def risk_rate_growth(C: Constants, runs: Runs) -> np.ndarray:
    """``(1/L(t) - 1/L(1)) / (kappa (t - 1))`` of each main run at the recorded steps
    ``t >= 2``, shape ``(records with t >= 2, main runs)``: how many times the guaranteed growth
    of ``1/L`` the run achieved. At least 1 exactly when ``L(t) <= 1/(1/L(1) + kappa (t - 1))``
    (:func:`risk_rate_ratio`); this form shows the slack (the ratio of risks stays within
    ``1e-5`` of 1 however large the slack, since ``kappa`` is tiny under (A1))."""
    t, L = runs.steps, runs.history["loss"][:, runs.main]
    later = t >= 2
    return (1.0 / L[later] - 1.0 / L[t == 1]) / (C.kappa * (t[later] - 1.0))[:, None]


def risk_rate_tolerance(C: Constants, runs: Runs) -> float:
    """The rounding allowance of :func:`risk_rate_under_A1`: ``1/L`` is computed to a few
    ulps, so ``1/L(t) - 1/L(1)`` to about ``4 eps / L``; 1000 times that, over the smallest
    guaranteed growth ``kappa`` (at ``t = 2``)."""
    L = runs.history["loss"][:, runs.main]
    return float(1e3 * 4 * np.finfo(np.float64).eps / L.min() / C.kappa)


def risk_rate_under_A1(P, R: Result) -> Claim:
    """Theorem 4.2, item 1, with the book's rate: under (A1), for ``t >= 1``,
    ``L(t) <= 1 / (1/L(1) + kappa (t - 1))`` (descent lemma + proxy-PL inequality), read as
    ``1/L(t) - 1/L(1) >= kappa (t - 1)`` (:func:`risk_rate_growth`). It is an equality at
    ``t = 1``, so the check reads the recorded steps ``t >= 2`` only (not applicable when none
    was recorded); the bound is 1 less the rounding allowance :func:`risk_rate_tolerance`.

    Returns:
        the theorem check, on the smallest growth of ``1/L`` over its guarantee at recorded
        ``t >= 2``, over the main runs.
    """
    ok = bool((R.runs.steps >= 2).any()) and R.setup.kappa > 0
    return Claim(
        "risk_rate_under_A1",
        "theorem",
        statement="a-thm-4-2#1",
        applies=_thm42(P, R)
        if ok
        else (False, "no step t ≥ 2 was recorded, or the step gives no rate (kappa = 0)"),
        value=lambda: risk_rate_growth(R.setup, R.runs),
        bound=1 - risk_rate_tolerance(R.setup, R.runs) if ok else 1.0,
        op=">=",
        detail="smallest (1/L(t) − 1/L(1)) / (κ(t − 1)) over recorded t ≥ 2, main runs "
        "(at least 1: L(t) within the book's guaranteed risk)",
    )


# --- checks of the larger steps -----------------------------------------------------------------


def final_losses(P, R: Result) -> np.ndarray:
    """The final loss of the main runs (the largest of them), then of each ladder step (the
    ``large_lr_scale`` run excluded): the losses that should fall as the step grows."""
    h, runs = R.runs.history, R.runs
    return np.array(
        [float(h["loss"][-1, runs.main].max())]
        + [float(h["loss"][-1, b]) for b in runs.ladder[:-1]]
    )


def larger_steps_smaller_loss(P, R: Result) -> Claim:
    """The page's observation: each larger step of the ladder ends at a smaller loss than the
    one before (the main runs first). The losses differ by orders of magnitude from one rung to
    the next: the direction is the claim, with no margin."""
    return Claim(
        "larger_steps_smaller_loss",
        "observation",
        statement=OBS_LADDER,
        value=-np.diff(final_losses(P, R)),
        bound=0.0,
        op=">",
        detail="smallest drop of the final loss from one step size to the next",
    )


def ladder_interpolates(P, R: Result) -> Claim:
    """The page's observation: the ladder's runs (beyond (A1)) classify every point from step 1
    on (every margin positive at recorded ``t >= 1``)."""
    return Claim(
        "ladder_interpolates",
        "observation",
        statement=OBS_LADDER,
        value=R.runs.history["min_margin"][1:, R.runs.ladder[:-1]],
        bound=0.0,
        op=">",
        detail="smallest margin at recorded steps t ≥ 1, ladder runs",
    )


def large_step_log_loss_ratio(P, R: Result) -> float:
    """``log max_{i,j} g_i/g_j`` of the far larger step (``large_lr_scale``), over its run."""
    return float(R.runs.history["log_loss_ratio"][:, R.runs.ladder[-1]].max())


def large_step_vs_C_R(P, R: Result) -> str:
    """The page's words on the far larger step against Lemma E.4's bound (plain text, after
    "against log C_R = ...;"): whether the measured log ratio is above it."""
    if large_step_log_loss_ratio(P, R) > math.log(R.setup.consts.C_R):
        return "above it, so beyond (A1) Lemma E.4's bound no longer holds"
    return "still below it: at these parameters even this step keeps Lemma E.4's bound"


def trajectory_bound_any_step(P, R: Result) -> Claim:
    """The book's item 3 for every step size: ``StableRank(W_t) <= C`` at ``t >= 1`` for every
    run of the batch whose realized (A2) holds at its own step (the bound ``C`` does not use
    (A1)). Runs are selected by their initialization, not by their outcome."""
    ok = R.runs.batch.realized["step_ratio"] <= P.eps
    sr = R.runs.sr
    return Claim(
        "trajectory_bound_any_step",
        "theorem",
        statement=ANY_STEP,
        applies=[book_trajectory_bound_finite(P, R)]
        if ok.any()
        else (False, "no run satisfies (A2) at its step"),
        value=lambda: sr[1:, ok],
        bound=R.setup.C_traj,
        op="<=",
        detail="largest stable rank at t ≥ 1, runs whose realized (A2) holds",
    )


# --- checks of step 3 ---------------------------------------------------------------------------

#: The threshold of the two observations of the initialization sweep. A rank-one step of norm
#: ``s`` on a Gaussian ``W0`` of norm ``r s`` gives a stable rank of about ``1 + r^2``: 1.25 at
#: ``r = 1/2`` and about 5 at ``r = 2``; 2 sits well between the two, and the triangle
#: inequality alone allows up to about 2.7 at ``r = 1/2`` and down to about 0.6 at ``r = 2``.
SWEEP_THRESHOLD = 2.0


def _sr0_ok(P) -> bool:
    return lowrank.gaussian_stable_rank(P.m, P.d) >= 8


def step1_lower_bound_valid(P, R: Result) -> Claim:
    """Sanity: the triangle inequality bounds ``SR(1)`` from below whatever the scale (``1e-9``
    for rounding)."""
    sw = R.sweep
    return Claim(
        "step1_lower_bound_valid",
        "sanity",
        value=sw.sr1 - sw.lower * (1 - 1e-9),
        bound=0.0,
        op=">=",
        detail="smallest SR(1) minus its triangle-inequality lower bound",
    )


def one_step_low_rank_below_half_step(P, R: Result) -> Claim:
    """The page's observation: one step gives a stable rank below 2 wherever the
    initialization is at most half the first step (``r <= 1/2``); not forced by the triangle
    inequality (:data:`SWEEP_THRESHOLD`). Applies where some swept scale has ``r <= 1/2`` and
    the initial stable rank is at least 8."""
    sw = R.sweep
    small_r = sw.r <= 0.5
    return Claim(
        "one_step_low_rank_below_half_step",
        "observation",
        statement=OBS_INIT_SWEEP,
        value=lambda: sw.sr1[small_r],
        bound=SWEEP_THRESHOLD,
        op="<=",
        detail="largest SR(1) over the swept scales with r ≤ 1/2",
        applies=(
            small_r.any() and _sr0_ok(P),
            "no swept scale has r <= 1/2, or the initial stable rank is below 8",
        ),
    )


def one_step_keeps_rank_above_twice_step(P, R: Result) -> Claim:
    """The page's observation: one step cannot bring the stable rank below 2 once the
    initialization is twice the first step (``r >= 2``; :data:`SWEEP_THRESHOLD`)."""
    sw = R.sweep
    large_r = sw.r >= 2
    return Claim(
        "one_step_keeps_rank_above_twice_step",
        "observation",
        statement=OBS_INIT_SWEEP,
        value=lambda: sw.sr1[large_r],
        bound=SWEEP_THRESHOLD,
        op=">=",
        detail="smallest SR(1) over the swept scales with r ≥ 2",
        applies=(
            large_r.any() and _sr0_ok(P),
            "no swept scale has r >= 2, or the initial stable rank is below 8",
        ),
    )


def summary_bound_keeps_rank_high(P, R: Result) -> Claim:
    """Sanity: at the ``1/50`` bound the initialization is thousands of times the first step,
    and the triangle inequality then forces ``SR(1) >= SR(0)/2`` (once ``r >= 3.4
    sqrt(SR(0))``): a consequence of ``r``."""
    sw = R.sweep
    at_f = sw.at_f
    return Claim(
        "summary_bound_keeps_rank_high",
        "sanity",
        value=sw.sr1[at_f] / sw.sr0[at_f],
        bound=0.5,
        op=">=",
        detail="smallest SR(1) / SR(0) at the 1/50 bound ω_f",
        applies=(
            bool(np.all(sw.r[at_f] >= 3.4 * np.sqrt(sw.sr0[at_f]))),
            "the 1/50 bound is not far enough above the first step",
        ),
    )


# --- checks of step 4 ---------------------------------------------------------------------------


def sweep_init_stable_rank_lower_bound(P, R: Result) -> Claim:
    """Section 4's lower bound on the stable rank at a Gaussian initialization, at every size
    of the sweeps: ``SR(0)`` over its concentration lower bound (at least 1 with probability
    ``1 - delta`` per run)."""
    rows = R.sizes.rows
    return Claim(
        "sweep_init_stable_rank_lower_bound",
        "theorem",
        statement="a-sec-4#init-stable-rank",
        value=(rows["SR(0)"] / rows["lower"]).to_numpy(),
        bound=1.0,
        op=">=",
        detail="smallest SR(0) over its concentration lower bound, every size",
    )


def sweep_init_stable_rank_at_most_min_md(P, R: Result) -> Claim:
    """Sanity: ``SR(0) <= min(m, d)`` at every size (true of every matrix)."""
    rows = R.sizes.rows
    return Claim(
        "sweep_init_stable_rank_at_most_min_md",
        "sanity",
        statement="a-sec-4#init-stable-rank",
        value=(rows["SR(0)"] / np.minimum(rows.m, rows.d)).to_numpy(),
        bound=1.0,
        op="<=",
        detail="largest SR(0) / min(m, d), every size (true of every matrix)",
    )


def sweep_A2_realised(P, R: Result) -> Claim:
    """Sanity: the realized (A2) at every size (built into each size's (A2) bound)."""
    return Claim(
        "sweep_A2_realised",
        "sanity",
        applies=thm42_A2(P, R),
        value=R.sizes.rows["step ratio"].to_numpy(),
        bound=P.eps,
        op="<=",
        detail="largest (‖W0‖_F + α‖∇L(W0) − ∇L(0)‖_F) / (α‖∇L(0)‖_F), every size",
    )


def sweep_step1_bound(P, R: Result) -> Claim:
    """Sanity: the stable rank after one step at every size, a consequence of (A2)."""
    return Claim(
        "sweep_step1_bound",
        "sanity",
        statement="a-thm-4-2#3",
        applies=thm42_A2(P, R),
        value=R.sizes.one["SR(1)"].to_numpy(),
        bound=R.setup.C_step1,
        op="<=",
        detail="largest stable rank after one step, every size",
    )


def sweep_trajectory_bound(P, R: Result) -> Claim:
    """The book's item 3 at every size: the larger step's ``max_{t>=1} StableRank(W_t)`` over
    the book's ``C`` of that size's data, for the sizes whose realized (A2) holds and whose
    ``C`` is finite."""
    long = R.sizes.long
    traj = long[long["A2 holds"] & np.isfinite(long["C"])]
    return Claim(
        "sweep_trajectory_bound",
        "theorem",
        statement=ANY_STEP,
        applies=(len(traj) > 0, "no size satisfies (A2) with a finite C"),
        value=lambda: (traj["max SR(t>=1)"] / traj["C"]).to_numpy(),
        bound=1.0,
        op="<=",
        detail="largest max SR(t ≥ 1) of the larger step over C of that size",
    )


# --- numbers the prose reads --------------------------------------------------------------------


def steps_to_log2_over_n(P, R: Result) -> float:
    """The first step at which the book's guaranteed risk under (A1), from the largest risk of
    the main runs after step 1, reaches ``log(2)/n`` (Theorem 3.1's level)."""
    t1 = R.runs.steps >= 1
    L1 = float(R.runs.history["loss"][t1][:, R.runs.main][0].max())
    return lowrank.steps_to_reach(L1, math.log(2) / P.n, R.setup.kappa)


def any_step_scope(P, R: Result) -> str:
    """Which runs :func:`trajectory_bound_any_step` holds to ``C``, in words: every run of the
    batch, or how many of them satisfy the realized (A2) at their own step."""
    ok = R.runs.batch.realized["step_ratio"] <= P.eps
    if ok.all():
        return "every run of the batch"
    return f"the {int(ok.sum())} of {ok.size} runs whose realized (A2) holds at their step"


def sweep_sides(P, R: Result) -> str:
    """The page's words on the two sides of ``r = 1`` in the initialization sweep, decided by
    :func:`one_step_low_rank_below_half_step` and :func:`one_step_keeps_rank_above_twice_step`
    (plain text)."""
    below = one_step_low_rank_below_half_step(P, R).outcome()
    above = one_step_keeps_rank_above_twice_step(P, R).outcome()
    if below and above:
        return "measured, every scale with r ≤ 1/2 ends below 2 and every scale with r ≥ 2 above it"
    said = {True: "holds", False: "fails", None: "does not apply"}
    return (
        f"at these parameters the side r ≤ 1/2 (below 2) {said[below]} and the side r ≥ 2 "
        f"(above 2) {said[above]}"
    )
