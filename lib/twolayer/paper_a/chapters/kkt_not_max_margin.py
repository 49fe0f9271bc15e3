"""Chapter "KKT is not max-margin" (``notebooks/paper_a/kkt_not_max_margin.md``): Paper A's
three-point example of Theorem 3.2, item 7 (a KKT point whose linear predictor ``z`` is not
the max-margin separator ``z*``), solved by hand and by Clarabel, and gradient flow on it.

``SPEC`` declares the page's parameters once. The page narrates two steps, each a function
returning named fields, gathered in a :class:`Result` (:func:`compute` runs both):

1. :func:`algebra` -- Problem (3) on the example over a grid of ``eps``, against the printed
   multipliers and the closed forms, and the example at the page's ``eps``
   (:class:`Algebra`);
2. :func:`train` -- loss-normalized gradient descent on the example from several
   initializations, run until its ``1/s`` rate reaches the page's tolerances (:class:`Flow`).

Hypotheses and checks are functions ``(P, R)`` returning a
:class:`~twolayer.page.checks.Hypothesis` or :class:`~twolayer.page.checks.Claim`, so
that a test can call them on an input where the statement is false
(``tests/failing_cases/paper_a_kkt_not_max_margin.py``). The configuration of the example
is our reconstruction (:func:`twolayer.paper_a.kkt.three_point_example`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from ...core import seeds, stats
from ...core.device import default_device, resolve_dtype
from ...core.params import Choice, Constraint, Device, Float, Int, ListOf
from ...page.checks import Claim, Hypothesis, make_hypothesis
from ...page.contract import ChapterSpec
from .. import assumptions, flow, kkt, models

__all__ = [
    "SPEC",
    "GAMMA",
    "SOLVER_TOL",
    "MARGIN_ALLOWANCE",
    "Algebra",
    "Flow",
    "Result",
    "example_table",
    "algebra",
    "train",
    "flow_result",
    "compute",
]

#: the leak of the example (``gamma = 1/2``)
GAMMA = kkt.THREE_POINT_GAMMA
#: Clarabel's accuracy on these problems: it runs to 1e-10 gaps (1e-8 on its fallback)
SOLVER_TOL = 1e-7
#: how far Clarabel's error can move a difference of two margins ``y_i <z, x_i>`` of unit
#: points: each coordinate of ``z`` within ``SOLVER_TOL``, so each margin within
#: ``sqrt(3) SOLVER_TOL``, their difference within twice that
MARGIN_ALLOWANCE = 2 * math.sqrt(3) * SOLVER_TOL

SPEC = ChapterSpec(
    chapter="paper_a/kkt_not_max_margin",
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
        "eps": Float(
            0,
            1,
            lo_open=True,
            hi_open=True,
            explore=(0.005, 0.05),
            doc="the example trained by gradient flow; Theorem 3.2's "
            "assumption needs eps at most 1/72",
        ),
        "eps_min": Float(
            0, 1, lo_open=True, hi_open=True, explore=(1e-5, 1e-3), doc="smallest eps of the sweep"
        ),
        "eps_max": Float(
            0, 1, lo_open=True, hi_open=True, explore=(0.1, 0.9), doc="largest eps of the sweep"
        ),
        "num_eps": Int(2, 1000, explore=(4, 40), doc="eps values of the sweep (log-spaced)"),
        "m_half": Int(1, 64, explore=(1, 4), doc="neurons of each sign, m1 = m2"),
        "loss": Choice("exp", "logistic", explore=True, doc="training loss"),
        "init_scale": Float(
            0,
            1e3,
            lo_open=True,
            explore=(0.1, 2.0),
            doc="initialization w_j ~ N(0, init_scale^2/3 I_3)",
        ),
        "init_mults": ListOf(
            Float(0, 1e3, lo_open=True),
            increasing=True,
            explore=[[0.001, 1.0], [0.01, 1.0, 10.0], [1.0]],
            doc="multiples of init_scale trained side by side",
        ),
        "steps": Int(
            100,
            10**7,
            explore=(300, 5000),
            doc="normalized GD steps before the run is extended to reach its tolerances",
        ),
        "tol": Float(
            0,
            0.5,
            lo_open=True,
            explore=(0.01, 0.1),
            doc="the distance to the convex optimum must end at most tol",
        ),
    },
    defaults={
        "seed": 0,
        "profile": None,
        "results_path": None,
        "device": "auto",
        "dtype": "float64",
        "eps": 0.0125,
        "eps_min": 1e-4,
        "eps_max": 0.5,
        "num_eps": None,
        "m_half": 2,
        "loss": "exp",
        "init_scale": 1.0,
        "init_mults": None,
        "steps": None,
        "tol": None,
    },
    profiles={
        "smoke": {"num_eps": 8, "steps": 500, "tol": 0.05, "init_mults": [0.001, 1.0]},
        "book": {
            "num_eps": 40,
            "steps": 5000,
            "tol": 0.01,
            "init_mults": [0.001, 1.0, 10.0],
        },
        "paper": {
            "num_eps": 200,
            "steps": 20_000,
            "tol": 0.002,
            "init_mults": [0.001, 1.0, 10.0, 100.0],
        },
    },
    constraints=[
        Constraint(
            "dtype",
            lambda P: P.dtype == "float64",
            'must be "float64" on this page: its runs approach a KKT '
            "direction over thousands of steps, and the tolerances of its "
            "checks were verified in float64 only",
        ),
        Constraint("eps_max", lambda P: P.eps_max > P.eps_min, "must be larger than eps_min"),
    ],
)


# --- step 1: Problem (3) by hand and by a solver ----------------------------------------------


def example_table(
    eps_grid,
    m_half: int,
    configuration: Callable[[float], tuple[np.ndarray, np.ndarray]] = kkt.three_point_example,
) -> pd.DataFrame:
    """One row per ``eps``: Problem (3) solved by Clarabel on ``configuration(eps)`` against
    the paper's printed multipliers and the closed forms of the example (Paper A, Theorem 3.2,
    item 7; the rows of :func:`twolayer.paper_a.kkt.three_point_table`, computed the same way),
    and the margins of the solver's own ``z``.

    Args:
        eps_grid: the values of ``eps``.
        m_half: neurons of each sign, ``m1 = m2``.
        configuration: ``eps -> (X, y)``, the three points the solver sees (default: the
            book's reconstruction :func:`~twolayer.paper_a.kkt.three_point_example`; a test
            passes another reading of the lost configuration).

    Returns:
        a DataFrame with the columns of ``kkt.three_point_table`` (``eps, holds, lam1..3,
        err_printed, err_system, err_closed_form, margin2, margin3, nmargin_z, nmargin_zstar,
        angle, z_ratio``: the closed forms from the printed multipliers) and, from Clarabel's
        solutions of Problem (3) and of the max-margin problem, ``solver_margin2``,
        ``solver_margin3`` (``y_i <z, x_i>``) and ``solver_angle`` (between its ``z`` and
        ``z*``).
    """
    rows = []
    for e in np.asarray(eps_grid, dtype=float):
        X, y = configuration(float(e))
        sol = kkt.solve_problem3(X, y, m_half, m_half, gamma=GAMMA)
        z_star, _ = kkt.max_margin_separator(X, y)
        Xe, ye = kkt.three_point_example(float(e))
        z, zs = kkt.three_point_closed_forms(float(e))
        printed = kkt.three_point_multipliers(float(e))
        marg = ye * (Xe @ z)
        solver_marg = y * (X @ sol.z)
        rows.append(
            {
                "eps": float(e),
                "holds": assumptions.near_orthogonality(X, GAMMA).holds,
                "lam1": sol.lam[0],
                "lam2": sol.lam[1],
                "lam3": sol.lam[2],
                "err_printed": float(np.abs(sol.lam - printed).max()),
                "err_system": float(
                    np.abs(sol.lam - kkt.three_point_kkt_system(float(e), m=2 * m_half)).max()
                ),
                "err_closed_form": float(max(np.abs(sol.z - z).max(), np.abs(z_star - zs).max())),
                "margin2": marg[1],
                "margin3": marg[2],
                "nmargin_z": marg.min() / np.linalg.norm(z),
                "nmargin_zstar": (ye * (Xe @ zs)).min() / np.linalg.norm(zs),
                "angle": kkt.angle(z, zs),
                "z_ratio": np.linalg.norm(z) / np.linalg.norm(zs),
                "solver_margin2": float(solver_marg[1]),
                "solver_margin3": float(solver_marg[2]),
                "solver_angle": kkt.angle(sol.z, z_star),
            }
        )
    return pd.DataFrame(rows)


@dataclass
class Algebra:
    """Step 1 (:func:`algebra`): the table over ``eps`` and the example at the page's ``eps``.

    Attributes:
        table: :func:`example_table` on the page's log grid of ``eps``.
        X, y: the three points at ``eps`` and their labels.
        sol: Clarabel's optimum of Problem (3) on them (``m1 = m2 = m_half``).
        z_star: Clarabel's max-margin separator.
        lam_cf: the printed multipliers ``(8/(4 eps + 5), 8/(4 eps + 5), 8/5)``.
        z_cf: ``z = (1 + gamma)/2 sum_i lam_i y_i x_i`` (item 2, ``m1 = m2``) with them.
        z_star_cf: ``X^{-1} y`` (every constraint active).
        angle_z_zstar: the angle between ``z_cf`` and ``z_star_cf`` (radians).
    """

    table: pd.DataFrame
    X: np.ndarray
    y: np.ndarray
    sol: kkt.Problem3Solution
    z_star: np.ndarray
    lam_cf: np.ndarray
    z_cf: np.ndarray
    z_star_cf: np.ndarray
    angle_z_zstar: float

    @property
    def nmargin_z(self) -> float:
        """``min_i y_i <z, x_i> / ||z||`` of the closed-form ``z``."""
        return float((self.y * (self.X @ self.z_cf)).min() / np.linalg.norm(self.z_cf))

    @property
    def nmargin_zstar(self) -> float:
        """``1 / ||z*||``, the normalized margin of the closed-form ``z*``."""
        return float(1 / np.linalg.norm(self.z_star_cf))

    @property
    def z_ratio(self) -> float:
        """``||z|| / ||z*||`` at the page's ``eps`` (closed forms)."""
        return float(np.linalg.norm(self.z_cf) / np.linalg.norm(self.z_star_cf))


def algebra(P) -> Algebra:
    """Step 1: Problem (3) on the example for ``eps`` on a log grid from ``eps_min`` to
    ``eps_max`` (:func:`example_table`), then the example at the page's ``eps``: Clarabel's
    ``z`` and ``z*``, and their closed forms from the printed multipliers (Paper A, Theorem
    3.2, items 2 and 7).

    Args:
        P: the validated parameters.

    Returns:
        an :class:`Algebra`.
    """
    eps_grid = np.geomspace(P.eps_min, P.eps_max, P.num_eps)
    tab = example_table(eps_grid, P.m_half)
    X, y = kkt.three_point_example(P.eps)
    sol = kkt.solve_problem3(X, y, P.m_half, P.m_half, gamma=GAMMA)
    z_star, _ = kkt.max_margin_separator(X, y)
    lam_cf = kkt.three_point_multipliers(P.eps)
    z_cf = (1 + GAMMA) / 2 * (lam_cf * y) @ X  # item 2, m1 = m2, printed multipliers
    z_star_cf = np.linalg.solve(X, y)  # every constraint active
    return Algebra(
        table=tab,
        X=X,
        y=y,
        sol=sol,
        z_star=z_star,
        lam_cf=lam_cf,
        z_cf=z_cf,
        z_star_cf=z_star_cf,
        angle_z_zstar=kkt.angle(z_cf, z_star_cf),
    )


def algebra_metrics(P, A: Algebra) -> dict:
    """The numbers step 1 records: the largest multiplier error, the smallest margin gap
    ``y_2 <z, x_2> - y_3 <z, x_3>``, the median of ``angle(z, z*) / eps`` over the grid where
    the assumption holds (``nan`` when none does) and the fitted power of ``eps`` in the angle
    over the whole grid."""
    tab = A.table
    slope = stats.fit_slope(tab.eps, tab.angle)
    small = tab[tab.eps <= 1 / 72]
    return {
        "max_multiplier_error": float(tab.err_printed.max()),
        "min_margin_gap": float((tab.margin2 - tab.margin3).min()),
        "angle_over_eps": (
            float((small.angle / small.eps).median()) if len(small) else float("nan")
        ),
        "angle_eps_slope": slope,
    }


# --- step 2: gradient flow ------------------------------------------------------------------------


@dataclass
class Flow:
    """Step 2 (:func:`train`): the runs and what the page reads from them.

    Attributes:
        run: the loss-normalized run (checkpoints, weights, per-step log-loss).
        total_steps: its number of steps, after the extension to the tolerances.
        mults: the initializations' multiples of ``init_scale``.
        dev: ``(K, 2, B)``: per checkpoint and run, the distance of the margin-normalized
            weights to Problem (3)'s optimum (relative, Frobenius) and the angle between the
            network's linear predictor ``z(W)`` and Clarabel's ``z``.
        to_zstar: ``(K, B)``: the angle between ``z(W)`` and Clarabel's ``z*``.
    """

    run: flow.FlowRun
    total_steps: int
    mults: np.ndarray
    dev: np.ndarray
    to_zstar: np.ndarray

    @property
    def final_dist(self) -> np.ndarray:
        return self.dev[-1, 0]

    @property
    def final_angle_to_z(self) -> np.ndarray:
        return self.dev[-1, 1]


def network(P) -> models.LeakyNetwork:
    """The page's network: ``m1 = m2 = m_half`` neurons, leak ``gamma = 1/2``."""
    return models.LeakyNetwork(P.m_half, P.m_half, gamma=GAMMA)


def deviations(P, A: Algebra, W) -> np.ndarray:
    """``(2, B)`` for weights ``W`` of shape ``(B, m, 3)``: the relative distance of the
    margin-normalized ``W`` to Problem (3)'s optimum ``W*`` and the angle between ``z(W)`` and
    Clarabel's ``z`` (both fall like ``1/s`` along the flow)."""
    net = network(P)
    dist = kkt.deviations(net, W, A.X, A.y, sol=A.sol, X_test=A.X[:1])["dist_to_convex"]
    to_z = np.array([kkt.angle(kkt.z_from_weights(w, P.m_half), A.sol.z) for w in W])
    return np.stack([dist, to_z])


def tolerances(P, A: Algebra) -> np.ndarray:
    """The run's tolerances: ``tol`` on the distance, half the angle between ``z`` and ``z*``
    on the angle to ``z`` (closer to ``z`` than to ``z*``)."""
    return np.array([[P.tol], [A.angle_z_zstar / 2]])


def flow_result(P, A: Algebra, run: flow.FlowRun, total_steps: int | None = None) -> Flow:
    """What the page reads from ``run`` (its deviations at every checkpoint, the angle to
    ``z*``); ``total_steps`` defaults to the run's last checkpoint."""
    dev = np.stack([deviations(P, A, run.W[k]) for k in range(len(run.checkpoints))])
    B = run.W.shape[1]
    z_hist = kkt.z_from_weights(run.W, P.m_half)
    to_zstar = np.array(
        [[kkt.angle(z_hist[k, b], A.z_star) for b in range(B)] for k in range(len(run.checkpoints))]
    )
    return Flow(
        run=run,
        total_steps=int(run.checkpoints[-1]) if total_steps is None else int(total_steps),
        mults=np.array(P.init_mults),
        dev=dev,
        to_zstar=to_zstar,
    )


def initial_weights(P, *, device=None, dtype=None) -> torch.Tensor:
    """``(B, m, 3)``: ``w_j ~ N(0, (mult init_scale)^2 / 3 I_3)`` for each multiple of
    ``init_mults``, from the seed ``derive(seed, "init")``."""
    device = default_device(P.device) if device is None else device
    mults = np.array(P.init_mults)
    return network(P).init(
        3,
        torch.as_tensor(mults * P.init_scale / math.sqrt(3)),
        seed=seeds.derive(P.seed, "init"),
        batch=len(mults),
        device=device,
        **({} if dtype is None else {"dtype": dtype}),
    )


def train(P, A: Algebra, *, device=None, dtype=None) -> Flow:
    """Step 2: loss-normalized gradient descent (step 1, a time change of gradient flow) on the
    example at ``eps`` from every initialization of :func:`initial_weights`, for ``steps``
    steps, extended until its ``1/s`` rate brings both deviations of :func:`deviations` to half
    of :func:`tolerances` (:func:`twolayer.paper_a.flow.flow_to_tolerance`).

    Args:
        P: the validated parameters.
        A: step 1's :class:`Algebra`.
        device, dtype: where the runs live (default: ``P.device``, float64).

    Returns:
        a :class:`Flow`.
    """
    device = default_device(P.device) if device is None else device
    net = network(P)
    W0 = initial_weights(P, device=device, dtype=dtype)
    Xt, yt = torch.as_tensor(A.X, device=device), torch.as_tensor(A.y, device=device)
    run, total = flow.flow_to_tolerance(
        net,
        W0,
        Xt,
        yt,
        loss=P.loss,
        lr=1.0,
        steps=P.steps,
        deviations=lambda W: deviations(P, A, W),
        tolerances=tolerances(P, A),
    )
    return flow_result(P, A, run, total)


def flow_metrics(P, R: Result) -> dict:
    """The numbers step 2 records: the angle between ``z`` and ``z*``, each run's final angle
    to ``z`` and distance to the convex optimum, and the number of steps."""
    F = R.flow
    return {
        "angle_z_zstar": R.algebra.angle_z_zstar,
        "final_angle_to_z": F.final_angle_to_z,
        "final_dist_to_convex": F.final_dist,
        "total_steps": F.total_steps,
    }


#: the metrics the page's prose quotes (glued)
GLUED_METRICS = ("angle_over_eps", "angle_eps_slope", "angle_z_zstar", "total_steps")


# --- everything ---------------------------------------------------------------------------------


@dataclass
class Result:
    """What the page computed, step by step (a step not yet run is ``None``)."""

    algebra: Algebra | None = None
    flow: Flow | None = None


def compute(P, *, device=None, dtype=None) -> Result:
    """Both steps of the page, in its order (:func:`algebra`, :func:`train`).

    Args:
        P: the validated parameters (``SPEC.params(...)`` or the page's ``contract.validate()``).
        device, dtype: where the runs live (default: ``P.device``, float64).

    Returns:
        a :class:`Result`.
    """
    A = algebra(P)
    return Result(algebra=A, flow=train(P, A, device=device, dtype=dtype))


def where(P):
    """``(device, dtype)`` of the runs: ``P.device`` resolved, and ``P.dtype``."""
    return default_device(P.device), resolve_dtype(P.dtype)


# --- checks of step 1 -----------------------------------------------------------------------------

EXAMPLE = "a-thm-3-2#7-example"


def multipliers_match_printed(P, R: Result) -> Claim:
    """Paper A's printed multipliers ``lambda_1 = lambda_2 = 8/(4 eps + 5)``, ``lambda_3 =
    8/5`` (Theorem 3.2, item 7's example) against Clarabel's duals of Problem (3) on the
    reconstructed configuration, to the solver's accuracy ``SOLVER_TOL``. Fails for another
    reading of the lost configuration."""
    return Claim(
        "multipliers_match_printed",
        "theorem",
        statement=EXAMPLE,
        value=R.algebra.table.err_printed.to_numpy(),
        bound=SOLVER_TOL,
        op="<=",
        detail="largest |Clarabel's λ_i − printed λ_i| over the ε grid",
    )


def multipliers_positive(P, R: Result) -> Claim:
    """Every multiplier positive (all three constraints active). Sanity: implied by
    :func:`multipliers_match_printed`, the printed multipliers being at least ``8/9``."""
    tab = R.algebra.table
    return Claim(
        "multipliers_positive",
        "sanity",
        statement=EXAMPLE,
        value=tab[["lam1", "lam2", "lam3"]].to_numpy().ravel(),
        bound=0.0,
        op=">",
        detail="smallest multiplier λ_i over the 3 points and the ε grid (implied by "
        "multipliers_match_printed)",
    )


def z_x2_differs_from_z_x3(P, R: Result) -> Claim:
    """The example's claim ``z^T x_2 != z^T x_3`` in its signed form ``y_2 z^T x_2 > y_3 z^T
    x_3``, on Clarabel's optimum of Problem (3) (not on the closed forms, where it is an
    identity), by the lower estimate: the difference minus :data:`MARGIN_ALLOWANCE`. Fails
    where ``z`` is a multiple of ``z*`` (orthonormal points), whose margins are equal."""
    tab = R.algebra.table
    return Claim(
        "z_x2_differs_from_z_x3",
        "theorem",
        statement=EXAMPLE,
        value=(tab.solver_margin2 - tab.solver_margin3 - MARGIN_ALLOWANCE).to_numpy(),
        bound=0.0,
        op=">",
        detail="smallest y₂⟨z, x₂⟩ − y₃⟨z, x₃⟩ of Clarabel's z over the ε grid, minus "
        "2√3 × 1e-7 for the solver's error",
    )


def z_not_max_margin(P, R: Result) -> Claim:
    """The normalized margin of ``z`` below that of ``z*`` (closed forms). Sanity: implied by
    :func:`z_x2_differs_from_z_x3`, since ``z*`` is unique and has equal margins, so ``z``
    with unequal margins is not a multiple of it."""
    tab = R.algebra.table
    return Claim(
        "z_not_max_margin",
        "sanity",
        statement=EXAMPLE,
        value=(tab.nmargin_zstar - tab.nmargin_z).to_numpy(),
        bound=0.0,
        op=">",
        detail="smallest normalized margin of z* minus that of z, over the ε grid (closed "
        "forms; implied by z_x2_differs_from_z_x3)",
    )


def z_ratio_within_item7(P, R: Result) -> Claim:
    """Item 7's ``||z|| <= 2/(kappa + gamma) ||z*||`` over the ``eps`` of the grid where the
    assumption holds (closed forms). Sanity: with ``m1 = m2`` (``kappa = 1``) it holds for
    the optimum of Problem (3) on *any* data, since ``v = -u = 2 z* / (sqrt(m)(1 + gamma))``
    is feasible, so ``||z|| <= sqrt(2 obj) <= 2 ||z*|| / (1 + gamma)``; no input of this page
    can make it fail."""
    tab = R.algebra.table
    return Claim(
        "z_ratio_within_item7",
        "sanity",
        statement="a-thm-3-2#7",
        applies=(bool(tab.holds.any()), "no eps of the grid is at most 1/72"),
        value=tab.z_ratio[tab.holds].to_numpy(),
        bound=kkt.z_bound(P.m_half, P.m_half, GAMMA),
        op="<=",
        detail="largest ‖z‖ / ‖z*‖ over the ε ≤ 1/72 of the grid (holds on any data when m₁ = m₂)",
    )


def solver_matches_kkt_system(P, R: Result) -> Claim:
    """Clarabel's multipliers against the hand-solved 3 x 3 KKT system (sanity)."""
    return Claim(
        "solver_matches_kkt_system",
        "sanity",
        value=R.algebra.table.err_system.to_numpy(),
        bound=SOLVER_TOL,
        op="<=",
        detail="largest |Clarabel's λ_i − λ_i of the KKT linear system| over the grid",
    )


def solver_matches_closed_forms(P, R: Result) -> Claim:
    """Clarabel's ``z`` and ``z*`` against the closed forms (sanity)."""
    return Claim(
        "solver_matches_closed_forms",
        "sanity",
        value=R.algebra.table.err_closed_form.to_numpy(),
        bound=SOLVER_TOL,
        op="<=",
        detail="largest |coordinate error| of Clarabel's z and z* against closed forms",
    )


def margin2_closed_form(P, R: Result) -> Claim:
    """Our algebra: ``y_2 z^T x_2 = 6 (1 + eps)/(4 eps + 5)`` (sanity)."""
    tab = R.algebra.table
    formula = 6 * (1 + tab.eps) / (4 * tab.eps + 5)
    return Claim(
        "margin2_closed_form",
        "sanity",
        value=np.abs(tab.margin2 - formula).to_numpy(),
        bound=1e-12,
        op="<=",
        detail="largest |y₂⟨z, x₂⟩ − 6(1 + ε)/(4ε + 5)| over the ε grid",
    )


def margin3_closed_form(P, R: Result) -> Claim:
    """Our algebra: ``y_3 z^T x_3 = 6/5`` (sanity)."""
    tab = R.algebra.table
    return Claim(
        "margin3_closed_form",
        "sanity",
        value=np.abs(tab.margin3 - 6 / 5).to_numpy(),
        bound=1e-12,
        op="<=",
        detail="largest |y₃⟨z, x₃⟩ − 6/5| over the ε grid",
    )


def assumption_holds_iff_eps_at_most_1_72(P, R: Result) -> Claim:
    """Theorem 3.2's assumption holds exactly for ``eps <= 1/72`` (our algebra: ``p = eps``,
    ``R = 1``, ``n = 3``; sanity)."""
    tab = R.algebra.table
    return Claim(
        "assumption_holds_iff_eps_at_most_1_72",
        "sanity",
        value=int((tab.holds != (tab.eps <= 1 / 72)).sum()),
        bound=0,
        op="==",
        detail="ε of the grid where 'assumption holds' differs from ε ≤ 1/72",
    )


def algebra_claims(P, R: Result) -> list[Claim]:
    """The checks of step 1, in the page's order."""
    return [
        multipliers_match_printed(P, R),
        multipliers_positive(P, R),
        z_x2_differs_from_z_x3(P, R),
        z_not_max_margin(P, R),
        z_ratio_within_item7(P, R),
        solver_matches_kkt_system(P, R),
        solver_matches_closed_forms(P, R),
        margin2_closed_form(P, R),
        margin3_closed_form(P, R),
        assumption_holds_iff_eps_at_most_1_72(P, R),
    ]


# --- the hypothesis and the checks of step 2 ------------------------------------------------------


def near_orthogonality(P, R: Result) -> Hypothesis:
    """Theorem 3.2's assumption on the three points at the page's ``eps`` (from the data
    alone: ``n / n_max <= 1``, i.e. ``eps <= 1/72``)."""
    asm = assumptions.near_orthogonality(R.algebra.X, GAMMA)
    return make_hypothesis(
        "near_orthogonality",
        title="Theorem 3.2",
        statement="a-thm-3-2",
        value=asm.ratio,
        bound=1.0,
        op="<=",
        reason="" if asm.holds else f"eps = {P.eps:g} is above 1/72",
        detail="n / n_max of Theorem 3.2's assumption for the three points",
    )


def z_differs_from_zstar(P, R: Result) -> Claim:
    """The angle between ``z`` and ``z*`` at the page's ``eps`` (closed forms) is positive.
    Sanity: implied by :func:`z_x2_differs_from_z_x3`, as :func:`z_not_max_margin`."""
    return Claim(
        "z_differs_from_zstar",
        "sanity",
        statement=EXAMPLE,
        value=R.algebra.angle_z_zstar,
        bound=0.0,
        op=">",
        detail="angle between z and z* (radians), from the closed forms (implied by "
        "z_x2_differs_from_z_x3)",
    )


def solver_angle_matches_closed_form(P, R: Result) -> Claim:
    """Clarabel's angle between ``z`` and ``z*`` against the closed forms (sanity)."""
    A = R.algebra
    return Claim(
        "solver_angle_matches_closed_form",
        "sanity",
        value=abs(kkt.angle(A.sol.z, A.z_star) - A.angle_z_zstar),
        bound=SOLVER_TOL,
        op="<=",
        detail="|solver's angle(z, z*) − closed-form angle| (radians)",
    )


def settled_fraction(run: flow.FlowRun, n: int) -> np.ndarray:
    """Per run: the fraction of its recorded losses (steps ``0..T``) before it settles below
    ``log(2)/n`` for good: Theorem 3.4's ``t0`` within the run
    (:meth:`~twolayer.paper_a.flow.FlowRun.settled_below`, the first step from which every
    later loss is below) over ``T + 1``; ``1`` when the last loss is not below (no ``t0``
    within the run)."""
    step, _ = run.settled_below(math.log(2) / n)
    return np.where(step >= 0, step / run.log_loss.shape[0], 1.0)


def thm34_loss_below_log2_over_n(P, R: Result, applies) -> Claim:
    """Theorem 3.4: from some ``t0`` on, ``L(W(t)) < log(2)/n``, read within the run: every
    initialization settles below ``log(2)/n`` for good before the run ends
    (:func:`settled_fraction` below 1). Fails for a run that never gets below, or that rises
    above again at its end. ``applies``: :func:`near_orthogonality`."""
    return Claim(
        "thm34_loss_below_log2_over_n",
        "theorem",
        statement="a-thm-3-4",
        applies=applies,
        value=settled_fraction(R.flow.run, len(R.algebra.y)),
        bound=1.0,
        op="<",
        detail="largest fraction of the run's steps before L stays below log 2 / n (1: not "
        "by the end), over the initializations",
    )


def flow_reaches_convex_optimum(P, R: Result, applies) -> Claim:
    """Corollary 3.5 (items 4-5): the margin-normalized weights end within ``tol`` of Problem
    (3)'s optimum, for every initialization. ``applies``: :func:`near_orthogonality`."""
    return Claim(
        "flow_reaches_convex_optimum",
        "theorem",
        statement="a-cor-3-5",
        applies=applies,
        value=R.flow.final_dist,
        bound=P.tol,
        op="<=",
        detail="largest ‖W − W*‖_F / ‖W*‖_F at the end, W scaled to margin 1",
    )


def flow_converges_to_z_not_zstar(P, R: Result, applies) -> Claim:
    """The flow's linear predictor ends closer to ``z`` than half the angle between ``z`` and
    ``z*``, hence (triangle inequality) farther from ``z*`` than from ``z``: gradient flow
    converges to ``z``, not to the max-margin ``z*``. ``applies``:
    :func:`near_orthogonality`."""
    return Claim(
        "flow_converges_to_z_not_zstar",
        "theorem",
        statement=EXAMPLE,
        applies=applies,
        value=R.flow.final_angle_to_z / R.algebra.angle_z_zstar,
        bound=0.5,
        op="<",
        detail="largest angle(z(W), z) / angle(z, z*) at the end, over initializations",
    )


def flow_claims(P, R: Result, near_orth: Hypothesis) -> list[Claim]:
    """The checks of step 2, in the page's order (``near_orth``: :func:`near_orthogonality`)."""
    return [
        z_differs_from_zstar(P, R),
        solver_angle_matches_closed_form(P, R),
        thm34_loss_below_log2_over_n(P, R, near_orth),
        flow_reaches_convex_optimum(P, R, near_orth),
        flow_converges_to_z_not_zstar(P, R, near_orth),
    ]


# --- what the page says about its numbers ---------------------------------------------------------


def flow_verdict(P, R: Result, converged: bool | None) -> str:
    """The end of the page's sentence on where the runs end, as MyST Markdown, decided from
    this run and the outcome ``converged`` of :func:`flow_converges_to_z_not_zstar`
    (``None``: not applicable): whether the flow is shown to converge to ``z``."""
    F = R.flow
    near, far = float(F.final_angle_to_z.max()), float(F.to_zstar[-1].min())
    if converged:
        return "the flow converges to $z$"
    if converged is None and near < far:
        return (
            "every run is closer to $z$, but the check that the flow converges to $z$ does "
            "not apply here (see the hypothesis above)"
        )
    return "these runs do not tell $z$ from $z^*$"
