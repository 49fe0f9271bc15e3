"""Chapter "Where gradient flow goes" (``notebooks/paper_a/gradient_flow.md``): gradient flow
on a leaky-ReLU network with a fixed second layer, followed to its directional limit by
loss-normalized gradient descent and certified against the optimum of the convex Problem (3)
(Paper A, Theorems 3.1, 3.2 and 3.4, Corollary 3.5).

``SPEC`` declares the page's parameters once. The page narrates five steps, each a function
returning named fields: :func:`target` (the data and the convex optimum ``W*``), :func:`train`
(the flow from many initializations), :func:`discretisation` (a four times smaller step),
:func:`sweep` (several leaks, ``m1 = m2`` and ``m1 != m2``) and :func:`phase` (Gaussian data
below and above the assumption); :func:`compute` runs all five. Every check is a function
returning a :class:`~twolayer.page.checks.Claim`, so that a test can call it on an input
where the statement is false (``tests/failing_cases/paper_a_gradient_flow.py``); the
sentences of the page that compare measured numbers are decided here (:func:`reading_figure`,
:func:`reading_discretisation`, :func:`phase_texts`).

Which checks are evidence. Item 7's bound ``||z|| <= 2/(kappa + gamma) ||z*||`` holds at the
optimum of Problem (3) for *every* data set (the paper's proof only uses that ``v = c z*``,
``u = -c z*`` is feasible for Problem (3)), so at ``W*`` it is a sanity check of the solver;
item 7 and item 2's signs are evidence only on the *trained* network (:func:`item7_z_ratio`,
:func:`sweep_item7_bound`, :func:`item2_sign_pattern`), where an untrained network fails them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ...core import seeds, stats
from ...core.params import Choice, Constraint, Device, Float, Int, ListOf
from ...page.checks import Claim, Hypothesis, make_hypothesis
from ...page.contract import ChapterSpec
from .. import assumptions, data, flow, kkt, metrics, models

SOLVER_TOL = 1e-7  # Clarabel runs to 1e-10 gaps (1e-8 on its fallback)
MULTS = (1e-3, 1.0, 10.0)  # the three initialization scales, times init_scale

SPEC = ChapterSpec(
    chapter="paper_a/gradient_flow",
    spec={
        "device": Device(
            doc='where the tensors live; "auto": CUDA when present, else the CPU',
            fixed="machinery: where the tensors live, not the mathematics",
        ),
        "dtype": Choice(
            "float64",
            "float32",
            doc="floating-point type (float64 only here)",
            fixed="float64 only on this page (a constraint: its tolerances were verified in "
            "float64)",
        ),
        "n": Int(2, 64, explore=(4, 12), doc="training points of the main experiment"),
        "d": Int(
            2,
            10**6,
            explore=(12, 10_000),
            doc="their dimension, at least n (the runs use the n coordinates "
            "of the data's span, so d costs nothing)",
        ),
        "m1": Int(1, 64, explore=(1, 6), doc="positive neurons, a_j = +1/sqrt(m)"),
        "m2": Int(1, 64, explore=(1, 6), doc="negative neurons, a_j = -1/sqrt(m)"),
        "gamma": Float(0, 1, lo_open=True, explore=(0.2, 1.0), doc="leak of the leaky ReLU"),
        "loss": Choice("exp", "logistic", explore=True, doc="training loss"),
        "init_scale": Float(
            0,
            1e3,
            lo_open=True,
            explore=(0.01, 3.0),
            doc="default initialization w_j ~ N(0, init_scale^2/d "
            "I_d); the runs start at 0.001, 1 and 10 times it",
        ),
        "gap": Float(
            0,
            3,
            lo_open=True,
            hi_open=True,
            explore=(0.2, 2.0),
            doc="n / n_max of the constructed data: Theorem 3.2's assumption holds iff gap <= 1",
        ),
        "directions": Int(
            1,
            256,
            explore=(2, 20),
            doc="random initial directions, each run at the three scales (item 4)",
        ),
        "steps": Int(
            100,
            10**7,
            explore=(500, 5000),
            doc="normalized GD steps before the run is extended to reach tol",
        ),
        "tol": Float(
            0,
            0.5,
            lo_open=True,
            explore=(0.01, 0.2),
            doc="every deviation of items 1-6 must end at most tol; runs are "
            "extended until the measured 1/s rate brings them to tol/2",
        ),
        "n_test": Int(
            100, 10**6, explore=(500, 10_000), doc="fresh Gaussian test points for item 6"
        ),
        "gammas": ListOf(
            Float(0, 1, lo_open=True),
            increasing=True,
            explore=[[0.5], [0.25, 0.9], [0.1, 0.5, 1.0]],
            doc="leaks of the sweep over equal and unequal m1, m2",
        ),
        "sweep_steps": Int(
            100, 10**7, explore=(250, 4000), doc="steps of each sweep run before extension"
        ),
        "phase_ns": ListOf(
            Int(3, 32),
            increasing=True,
            explore=[[4], [4, 8], [4, 8, 16]],
            doc="sample sizes of the phase diagram",
        ),
        "phase_dims": Int(
            3,
            40,
            explore=(3, 9),
            doc="dimensions per n in the phase diagram, log-spaced from n to 4 d_suff",
        ),
        "phase_draws": Int(1, 64, explore=(1, 4), doc="Gaussian data sets per (n, d)"),
        "phase_steps": Int(
            100, 10**7, explore=(250, 4000), doc="steps of each phase-diagram run before extension"
        ),
    },
    defaults={
        "seed": 0,
        "profile": None,
        "results_path": None,
        "device": "auto",
        "dtype": "float64",
        "n": 8,
        "d": 40,
        "m1": 3,
        "m2": 2,
        "gamma": 0.5,
        "loss": "exp",
        "init_scale": 1.0,
        "gap": 0.9,
        "directions": None,
        "steps": None,
        "tol": None,
        "n_test": None,
        "gammas": None,
        "sweep_steps": None,
        "phase_ns": None,
        "phase_dims": None,
        "phase_draws": None,
        "phase_steps": None,
    },
    profiles={
        "smoke": {
            "directions": 4,
            "steps": 1000,
            "tol": 0.1,
            "n_test": 1000,
            "gammas": [0.5],
            "sweep_steps": 500,
            "phase_ns": [4],
            "phase_dims": 4,
            "phase_draws": 2,
            "phase_steps": 500,
        },
        "book": {
            "directions": 20,
            "steps": 5000,
            "tol": 0.01,
            "n_test": 10_000,
            "gammas": [0.25, 0.5, 0.9],
            "sweep_steps": 4000,
            "phase_ns": [4, 8, 16],
            "phase_dims": 9,
            "phase_draws": 4,
            "phase_steps": 4000,
        },
        "paper": {
            "directions": 50,
            "steps": 20_000,
            "tol": 0.002,
            "n_test": 100_000,
            "gammas": [0.1, 0.25, 0.5, 0.75, 0.9, 1.0],
            "sweep_steps": 10_000,
            "phase_ns": [4, 8, 16, 32],
            "phase_dims": 16,
            "phase_draws": 16,
            "phase_steps": 10_000,
        },
    },
    constraints=[
        Constraint("d", lambda P: P.d >= P.n, "must be at least n"),
        Constraint(
            "dtype",
            lambda P: P.dtype == "float64",
            'must be "float64" on this page: its runs approach a KKT '
            "direction over thousands of steps, and the tolerances of items "
            "1-6 and of the KKT residual were verified in float64 only",
        ),
    ],
)


def _t(a, device=None) -> torch.Tensor:
    return torch.as_tensor(a) if device is None else torch.as_tensor(a, device=device)


# --- step 1: the data and the target ------------------------------------------------------------


@dataclass
class Target:
    """The training data and what Theorem 3.2 predicts for them.

    Attributes:
        X: the data in ``R^d`` (``(n, d)``); ``y`` their labels in ``{-1, +1}``.
        Xc: the data in an orthonormal basis of their span (``(n, k)``), where the runs train.
        asm: Theorem 3.2's assumption measured on ``X``
            (:class:`~twolayer.paper_a.assumptions.NearOrthogonality`).
        net: the leaky-ReLU network with ``m1`` positive and ``m2`` negative neurons.
        lr: the step ``1 / R_max^2`` of normalized gradient descent.
        sol: the optimum ``(v*, u*)`` of Problem (3) and its duals ``lambda_i`` (item 5).
        z_star: the l2 max-margin linear separator (item 7).
        X_test: ``n_test`` fresh ``N(0, I_k)`` points for item 6.
    """

    X: np.ndarray
    y: np.ndarray
    Xc: np.ndarray
    asm: assumptions.NearOrthogonality
    net: models.LeakyNetwork
    lr: float
    sol: kkt.Problem3Solution
    z_star: np.ndarray
    X_test: np.ndarray

    @property
    def z_bound(self) -> float:
        """Item 7's bound ``2 / (kappa + gamma)`` on ``||z|| / ||z*||``."""
        return kkt.z_bound(self.net.m1, self.net.m2, self.net.gamma)

    @property
    def lambda_bounds(self) -> tuple[float, float]:
        """Item 2's interval ``(1/(2 R_max^2), 3/(2 gamma^2 R_min^2))`` for every ``lambda_i``."""
        return kkt.multiplier_bounds(self.Xc, self.net.gamma)

    @property
    def wstar_z_ratio(self) -> float:
        """``||z|| / ||z*||`` at ``W*``."""
        return float(np.linalg.norm(self.sol.z) / np.linalg.norm(self.z_star))


def target_from_data(P, X, y) -> Target:
    """The :class:`Target` of data ``X`` (``(n, d)``) and labels ``y`` for the network of ``P``
    (``m1``, ``m2``, ``gamma``): Problem (3) and the max-margin separator solved by Clarabel in
    the data's span coordinates (Paper A, Theorem 3.2, items 5 and 7).

    Args:
        P: the validated parameters.
        X: the training points.
        y: their labels.

    Returns:
        a :class:`Target`.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    asm = assumptions.near_orthogonality(X, P.gamma)
    Xc, _ = flow.span_coordinates(X)
    net = models.LeakyNetwork(P.m1, P.m2, gamma=P.gamma)
    lr = 1.0 / asm.R_max**2
    sol = kkt.solve_problem3(Xc, y, P.m1, P.m2, gamma=P.gamma)
    z_star, _ = kkt.max_margin_separator(Xc, y)
    X_test = seeds.rng(P.seed, "test").standard_normal((P.n_test, Xc.shape[1]))
    return Target(X, y, Xc, asm, net, lr, sol, z_star, X_test)


def target(P) -> Target:
    """The page's data (:func:`twolayer.paper_a.data.constructed_gram`: norms in ``[1, 1.2]``,
    off-diagonal inner products ``+-c`` with ``n / n_max = gap``) and their :class:`Target`.

    Args:
        P: the validated parameters.

    Returns:
        a :class:`Target`.
    """
    ds = data.constructed_gram(
        P.n, P.d, seed=seeds.derive(P.seed, "data"), gamma=P.gamma, ratio=P.gap
    )
    return target_from_data(P, ds.X, ds.y)


def near_orthogonality(P, S: Target) -> Hypothesis:
    """Theorem 3.2's assumption ``n <= gamma^3 R_min^4 / (3 p R_max^2)``, measured on the data;
    it gates every check of Theorems 3.2 and 3.4 and Corollary 3.5 on the page."""
    return make_hypothesis(
        "near_orthogonality",
        title="Theorem 3.2",
        statement="a-thm-3-2",
        value=S.asm.ratio,
        bound=1.0,
        op="<=",
        reason=f"the data have n / n_max = {S.asm.ratio:.3g} (gap = {P.gap:g})",
        detail="n / n_max of Theorem 3.2's assumption on the constructed data",
    )


def _wstar_margins(S: Target) -> np.ndarray:
    return S.net.margins(_t(S.sol.W), _t(S.Xc), _t(S.y)).numpy()


def wstar_is_kkt_point_of_problem1(P, S: Target, applies) -> Claim:
    """Item 5 read backwards: the convex optimum, tiled into ``W*``, is a KKT point of Problem
    (1) with the solver's duals as multipliers (largest of the stationarity, feasibility,
    slackness and dual-sign residuals, :func:`twolayer.paper_a.kkt.problem1_kkt_residual`)."""
    res = kkt.problem1_kkt_residual(S.net, S.sol.W, S.Xc, S.y, lam=S.sol.lam)
    return Claim(
        "wstar_is_kkt_point_of_problem1",
        "theorem",
        statement="a-thm-3-2#5",
        applies=applies,
        value=max(res.values()),
        bound=SOLVER_TOL,
        op="<=",
        detail="largest KKT residual of W* for Problem (1), with the solver's duals",
    )


def wstar_multipliers_in_range(P, S: Target, applies) -> Claim:
    """Item 2: every multiplier ``lambda_i`` lies in ``(1/(2 R_max^2), 3/(2 gamma^2 R_min^2))``."""
    return Claim(
        "wstar_multipliers_in_range",
        "theorem",
        statement="a-thm-3-2#2",
        applies=applies,
        value=S.sol.lam,
        bound=S.lambda_bounds,
        op="in",
        detail="the solver's multiplier λ_i farthest outside item 2's interval",
    )


def wstar_sign_pattern(P, S: Target, applies) -> Claim:
    """Item 2's signs at ``W*``: ``y_i v*.x_i > 0`` and ``y_i u*.x_i < 0`` for every ``i``."""
    Xc, y, sol = S.Xc, S.y, S.sol
    signs = np.minimum(y * (Xc @ sol.v), -y * (Xc @ sol.u)) / np.linalg.norm(Xc, axis=1)
    return Claim(
        "wstar_sign_pattern",
        "theorem",
        statement="a-thm-3-2#2",
        applies=applies,
        value=signs,
        bound=0.0,
        op=">",
        detail="min_i min(y_i⟨v*, x_i⟩, −y_i⟨u*, x_i⟩) / ‖x_i‖",
    )


def wstar_margins_all_one(P, S: Target, applies) -> Claim:
    """Item 1 at ``W*``: ``y_i f(x_i; W*) = 1`` for every ``i``."""
    return Claim(
        "wstar_margins_all_one",
        "theorem",
        statement="a-thm-3-2#1",
        applies=applies,
        value=np.abs(_wstar_margins(S) - 1).max(),
        bound=SOLVER_TOL,
        op="<=",
        detail="max_i |y_i f(x_i; W*) − 1|",
    )


def wstar_z_separates(P, S: Target, applies) -> Claim:
    """Item 7's first half at ``W*``: ``y_i z.x_i >= 1`` with ``z = (m1 v* - m2 u*)/sqrt(m)``
    (it needs item 2's signs: with ``u*.x_i > 0`` for a positive point it can fail)."""
    return Claim(
        "wstar_z_separates",
        "theorem",
        statement="a-thm-3-2#7",
        applies=applies,
        value=(S.y * (S.Xc @ S.sol.z)).min(),
        bound=1 - SOLVER_TOL,
        op=">=",
        detail="min_i y_i⟨z, x_i⟩ at W*",
    )


def wstar_z_ratio_in_bound(P, S: Target) -> Claim:
    """Item 7's bound at ``W*``. Sanity, not evidence: the paper's proof only uses that
    ``(v, u) = (c z*, -c z*)`` is feasible for Problem (3), so the optimum of Problem (3)
    satisfies the bound on *every* data set (measured: on 300 random data sets far outside the
    assumption the ratio never exceeded 0.9985 of the bound); it checks the solver. The
    evidence for item 7 is the trained network's ratio (:func:`item7_z_ratio`)."""
    return Claim(
        "wstar_z_ratio_in_bound",
        "sanity",
        statement="a-thm-3-2#7",
        value=S.wstar_z_ratio,
        bound=S.z_bound + SOLVER_TOL,
        op="<=",
        detail="‖z‖ / ‖z*‖ at W* (holds for any optimum of Problem (3))",
    )


def wstar_item2_formula(P, S: Target) -> Claim:
    """Sanity: Problem (3)'s stationarity is item 2's formula for ``v`` and ``u``."""
    v_f, u_f = kkt.vu_from_multipliers(S.sol.lam, S.Xc, S.y, S.net.m, gamma=P.gamma)
    return Claim(
        "wstar_item2_formula",
        "sanity",
        bound=SOLVER_TOL,
        op="<=",
        value=max(np.abs(v_f - S.sol.v).max(), np.abs(u_f - S.sol.u).max()),
        detail="largest coordinate gap between item 2's v, u and the solver's v*, u*",
    )


def wstar_rank_two(P, S: Target) -> Claim:
    """Sanity: ``W*`` tiles one ``v`` and one ``u``, so its rank is at most 2 (any such matrix)."""
    W = S.sol.W
    rank = np.linalg.matrix_rank(W, tol=1e-9 * np.linalg.norm(W))
    return Claim(
        "wstar_rank_two",
        "sanity",
        value=int(rank),
        bound=2,
        op="<=",
        detail="numerical rank of W* (singular values above 1e-9 ‖W*‖_F)",
    )


def wstar_linear_boundary(P, S: Target) -> Claim:
    """Sanity: with one ``v`` and one ``u``, ``sign f(x; W*) = sign(z.x)`` for every ``x``."""
    f_star = S.net(_t(S.sol.W), _t(S.X_test)).numpy()
    return Claim(
        "wstar_linear_boundary",
        "sanity",
        bound=0,
        op="==",
        value=int((np.sign(f_star) != np.sign(S.X_test @ S.sol.z)).sum()),
        detail="test points with sign f(x; W*) ≠ sign⟨z, x⟩",
    )


def target_claims(P, S: Target, hyp) -> list[Claim]:
    """The checks of ``W*``, in the page's order (``hyp``: :func:`near_orthogonality`)."""
    return [
        wstar_is_kkt_point_of_problem1(P, S, hyp),
        wstar_multipliers_in_range(P, S, hyp),
        wstar_sign_pattern(P, S, hyp),
        wstar_margins_all_one(P, S, hyp),
        wstar_z_separates(P, S, hyp),
        wstar_z_ratio_in_bound(P, S),
        wstar_item2_formula(P, S),
        wstar_rank_two(P, S),
        wstar_linear_boundary(P, S),
    ]


# --- step 2: the flow from many initializations ----------------------------------------------


@dataclass
class Training:
    """The runs of normalized gradient descent from ``directions`` random initial directions,
    each at the three scales of :data:`MULTS`.

    Attributes:
        W0: the initial weights, ``(B, m, k)`` with ``B = 3 directions`` (run ``b``: direction
            ``b // 3`` at scale ``MULTS[b % 3]``), on the run's device.
        run: the :class:`~twolayer.paper_a.flow.FlowRun` (weights at the checkpoints, on the
            host; log-loss and log flow time at every step).
        total_steps: the steps the run took (``steps``, extended to reach ``tol / 2``).
        final: one row per run at the last checkpoint: the certificate of
            :func:`twolayer.paper_a.kkt.certify` (``margin_max_dev``, ``row_collapse``,
            ``rank_ratio``, ``dist_to_convex``, ``dist_op``, ``lambda_min``, ``lambda_max``,
            ``sign_agreement``, ``z_ratio``, ``z_slack``, ``sign_pattern_min``, ...), the KKT
            residual of Problem (1) with multipliers fitted to the run (``kkt_residual``),
            ``init`` and ``direction``.
    """

    W0: torch.Tensor
    run: flow.FlowRun
    total_steps: int
    final: object  # pandas.DataFrame

    @property
    def B(self) -> int:
        return int(self.run.W.shape[1])


def training_from_run(P, S: Target, run: flow.FlowRun, W0=None) -> Training:
    """The :class:`Training` of a finished ``run``: its last checkpoint certified against
    ``S`` (items 1-7 of Theorem 3.2, and Theorem 3.1's KKT residual).

    Args:
        P: the validated parameters.
        S: the :class:`Target`.
        run: a run of :func:`twolayer.paper_a.flow.normalized_flow` on ``S.Xc``.
        W0: its initial weights (default: the run's first checkpoint).

    Returns:
        a :class:`Training` with ``total_steps`` the run's last step.
    """
    deviations = flow.deviation_function(
        S.net, S.Xc, S.y, S.sol, X_test=S.X_test, kkt_residual=True
    )
    final = flow.certify_run(
        run, S.net, S.Xc, S.y, sol=S.sol, z_star=S.z_star, X_test=S.X_test, every_checkpoint=False
    )
    final["kkt_residual"] = deviations(run.W[-1])[-1]
    final["init"] = [f"{MULTS[b % 3]:g} x default" for b in final.config]
    final["direction"] = final.config // 3
    W0 = run.W[0] if W0 is None else W0
    return Training(W0, run, int(run.checkpoints[-1]), final)


def train(P, S: Target, device=None) -> Training:
    """Normalized gradient descent (step ``S.lr``) from ``directions`` random directions at
    0.001, 1 and 10 times the default scale ``N(0, init_scale^2/d I)``, all in one batch on
    ``device``, for ``steps`` steps, then extended until the deviations of items 1-6 and
    Theorem 3.1's KKT residual, extrapolated at rate ``1/s``, reach ``tol / 2``
    (:func:`twolayer.paper_a.flow.flow_to_tolerance`).

    Args:
        P: the validated parameters.
        S: the :class:`Target`.
        device: where the runs compute (``None``: the CPU).

    Returns:
        a :class:`Training`.
    """
    mults = np.array(MULTS)
    k = S.Xc.shape[1]
    W0 = flow.initializations(
        S.net,
        k,
        P.d,
        P.init_scale,
        mults=mults,
        directions=P.directions,
        seed=seeds.derive(P.seed, "init"),
    )
    W0 = W0.to(device=device)  # drawn on the host from the seed, then moved
    Xt, yt = _t(S.Xc, device), _t(S.y, device)
    deviations = flow.deviation_function(
        S.net, S.Xc, S.y, S.sol, X_test=S.X_test, kkt_residual=True
    )
    run, total_steps = flow.flow_to_tolerance(
        S.net,
        W0,
        Xt,
        yt,
        loss=P.loss,
        lr=S.lr,
        steps=P.steps,
        deviations=deviations,
        tolerances=P.tol,
    )
    T = training_from_run(P, S, run, W0)
    T.total_steps = total_steps
    return T


def worst_final_loss(P, T: Training) -> float:
    """``max_b n L(W_b) / log 2`` at the end of the runs (below 1: under ``log(2)/n``)."""
    return float(np.exp(T.run.log_loss[-1]).max() * P.n / math.log(2))


def settled_fraction(P, T: Training) -> np.ndarray:
    """Per run: the fraction of its recorded losses before it settles below ``log(2)/n`` for
    good (Theorem 3.4's ``t0`` within the run,
    :meth:`~twolayer.paper_a.flow.FlowRun.settled_below`); ``1`` when the last loss is not
    below."""
    step, _ = T.run.settled_below(math.log(2) / P.n)
    return np.where(step >= 0, step / T.run.log_loss.shape[0], 1.0)


def thm34_loss_below_log2_over_n(P, T: Training, applies) -> Claim:
    """Theorem 3.4: from every initialization the loss gets below ``log(2)/n`` and stays there
    from some ``t0`` on, read within the run: every run settles below for good before it ends
    (:func:`settled_fraction` below 1). The end-of-run loss itself would not do: the runs are
    extended until their directions converge, so it ends astronomically far below and the
    comparison could not bind. Fails for a run that never gets below, or rises again."""
    return Claim(
        "thm34_loss_below_log2_over_n",
        "theorem",
        statement="a-thm-3-4",
        applies=applies,
        value=settled_fraction(P, T),
        bound=1.0,
        op="<",
        detail="largest fraction of the run's steps before L stays below log 2 / n (1: not "
        f"by the end), over {T.B} runs",
    )


def loss_below_log2_over_n(P, T: Training) -> Hypothesis:
    """Theorem 3.1's hypothesis ``L < log(2)/n``, reached by every run (it needs no assumption
    on the data)."""
    return make_hypothesis(
        "loss_below_log2_over_n",
        title="Theorem 3.1",
        statement="a-thm-3-1",
        value=worst_final_loss(P, T),
        bound=1.0,
        op="<",
        reason="a run did not get below log(2)/n",
        detail=f"largest n L / log 2 at the end, over {T.B} runs",
    )


def thm31_direction_is_kkt_point(P, T: Training, applies) -> Claim:
    """Theorem 3.1: the direction approaches a KKT point of Problem (1). The multipliers are
    fitted to the trained ``W`` itself (non-negative least squares,
    :func:`twolayer.paper_a.kkt.kkt_residual`), so it applies on any data the run separates."""
    return Claim(
        "thm31_direction_is_kkt_point",
        "theorem",
        statement="a-thm-3-1",
        applies=applies,
        value=T.final.kkt_residual.to_numpy(),
        bound=P.tol,
        op="<=",
        detail="largest KKT residual of the trained direction (NNLS multipliers)",
    )


def _item(name, item, value, P, applies, detail) -> Claim:
    return Claim(
        name,
        "theorem",
        statement=f"a-thm-3-2#{item}",
        applies=applies,
        value=np.asarray(value),
        bound=P.tol,
        op="<=",
        detail=detail,
    )


def item1_margins(P, T: Training, applies) -> Claim:
    """Item 1 at the end of every run: every margin of ``W~ = W / min_i y_i f(x_i; W)`` within
    ``tol`` of 1."""
    return _item(
        "item1_margins",
        "1",
        T.final.margin_max_dev.to_numpy(),
        P,
        applies,
        "largest max_i |y_i f(x_i; W~) − 1| at the end, over runs",
    )


def item2_rows_collapse(P, T: Training, applies) -> Claim:
    """Item 2's collapse: every row of ``W~`` within ``tol ||W~||_F`` of its group's mean."""
    return _item(
        "item2_rows_collapse",
        "2",
        T.final.row_collapse.to_numpy(),
        P,
        applies,
        "largest distance of a row of W~ from its group's mean, over ‖W~‖_F",
    )


def item3_rank_two(P, T: Training, applies) -> Claim:
    """Item 3: ``sigma_3 / sigma_1`` of ``W~`` at most ``tol``."""
    return _item(
        "item3_rank_two",
        "3",
        T.final.rank_ratio.to_numpy(),
        P,
        applies,
        "largest σ₃/σ₁ of W~ at the end, over runs",
    )


def item5_convex_optimum(P, T: Training, applies) -> Claim:
    """Item 5: the first direction's three runs end within ``tol`` (relative) of ``W*``."""
    first = T.final.direction == 0
    return _item(
        "item5_convex_optimum",
        "5",
        T.final.dist_to_convex[first].to_numpy(),
        P,
        applies,
        "largest ‖W~ − W*‖_F / ‖W*‖_F at the end, first direction's 3 runs",
    )


def item6_linear_boundary(P, T: Training, applies) -> Claim:
    """Item 6: the share of test points where ``sign f(x; W~) != sign(z.x)`` at most ``tol``."""
    return _item(
        "item6_linear_boundary",
        "6",
        (1 - T.final.sign_agreement).to_numpy(),
        P,
        applies,
        "largest share of test points with sign f(x; W~) ≠ sign⟨z, x⟩",
    )


def item7_z_ratio(P, S: Target, T: Training, applies) -> Claim:
    """Item 7 on the *trained* networks: ``||z|| / ||z*||`` of ``W~`` (``z`` from its group
    means) exceeds ``2/(kappa + gamma)`` by at most ``tol`` of the bound, the tolerance of
    items 1-6. At the limit ``W*`` the excess is at most 0 on every data set, and ``z`` moves
    by at most ``||W~ - W*||_F`` while ``||W*||_F <= 2/(kappa + gamma) ||z*||``, so the relative
    excess of ``W~`` is at most its relative distance to ``W*``. Sanity, not evidence: it is
    therefore implied by :func:`item5_convex_optimum` (that distance at most ``tol``) and the
    bound at ``W*``, which the optimum of Problem (3) meets on any data set
    (:func:`wstar_z_ratio_in_bound`). Item 7 has no check of its own that could fail where
    the theorem applies."""
    return Claim(
        "item7_z_ratio",
        "sanity",
        statement="a-thm-3-2#7",
        applies=applies,
        value=(T.final.z_ratio / S.z_bound - 1).to_numpy(),
        bound=P.tol,
        op="<=",
        detail="largest trained ‖z‖/‖z*‖ over 2/(κ + γ), minus 1, over runs (implied by item 5)",
    )


def item2_multipliers_in_range(P, S: Target, T: Training, applies) -> Claim:
    """Item 2's interval for the multipliers recovered from the trained rows (least squares on
    the group means, :func:`twolayer.paper_a.kkt.multipliers_from_vu`)."""
    return Claim(
        "item2_multipliers_in_range",
        "theorem",
        statement="a-thm-3-2#2",
        applies=applies,
        bound=S.lambda_bounds,
        op="in",
        value=np.concatenate([T.final.lambda_min, T.final.lambda_max]),
        detail="multiplier recovered from the trained rows farthest outside the interval",
    )


def item2_sign_pattern(P, T: Training, applies) -> Claim:
    """Item 2's signs on the *trained* networks: ``y_i v.x_i > 0`` and ``y_i u.x_i < 0`` with
    ``v``, ``u`` the group means of ``W~`` (measured on ``W~`` itself, not on ``W*``, whose
    signs :func:`wstar_sign_pattern` checks: a network the flow has not shaped yet has some
    sign wrong)."""
    return Claim(
        "item2_sign_pattern",
        "theorem",
        statement="a-thm-3-2#2",
        applies=applies,
        value=T.final.sign_pattern_min.to_numpy(),
        bound=0.0,
        op=">",
        detail="smallest min_i min(y_i⟨v, x_i⟩, −y_i⟨u, x_i⟩)/‖x_i‖ of the trained v, u",
    )


def item4_unique_optimum(P, T: Training, applies) -> Claim:
    """Item 4: every random direction, at every scale, ends within ``tol`` of the same ``W*``."""
    return _item(
        "item4_unique_optimum",
        "4",
        T.final.dist_to_convex.to_numpy(),
        P,
        applies,
        f"largest ‖W~ − W*‖_F / ‖W*‖_F at the end, over all {T.B} runs",
    )


def norm_ratios(S: Target, T: Training) -> np.ndarray:
    """``||W~||_F^2 / ||W*||_F^2`` at every checkpoint of every run (NaN where the data are not
    separated): ``W~`` has every margin at least 1, so it is feasible for Problem (1)."""
    Wn_all = metrics.normalize_by_margin(S.net, T.run.W, _t(S.Xc), _t(S.y), strict=False)
    return ((torch.linalg.norm(Wn_all, dim=(-2, -1)) / np.linalg.norm(S.sol.W)) ** 2).numpy()


def item4_no_feasible_point_below_wstar(P, S: Target, T: Training, applies) -> Claim:
    """Item 4: ``W*`` is the global optimum of Problem (1), so no feasible point the runs visit
    has a smaller norm."""
    return Claim(
        "item4_no_feasible_point_below_wstar",
        "theorem",
        statement="a-thm-3-2#4",
        applies=applies,
        value=float(np.nanmin(norm_ratios(S, T))),
        bound=1 - SOLVER_TOL,
        op=">=",
        detail="smallest ‖W~‖²_F / ‖W*‖²_F over every run and checkpoint",
    )


def distance_history(S: Target, T: Training) -> np.ndarray:
    """``||W~ - W*||_F / ||W*||_F`` at every checkpoint and run, ``(K, B)``."""
    return flow.distance_history(T.run, S.net, S.Xc, S.y, W_star=S.sol.W)


def rate_slopes(S: Target, T: Training) -> np.ndarray:
    """The slope of ``log ||W~ - W*||`` against ``log s`` over the last decade, per run
    (:func:`twolayer.paper_a.flow.rate_slopes`)."""
    return flow.rate_slopes(T.run.s, distance_history(S, T))


def slope_standard_errors(s, values, decades: float = 1.0) -> np.ndarray:
    """The least-squares standard error of the slopes of :func:`twolayer.paper_a.flow.rate_slopes`
    (same window: the last ``decades`` of ``s``), ``sqrt(SSR / (k - 2) / S_xx)`` over the
    ``k`` points of the window (:func:`twolayer.core.stats.fit_slope`); NaN with fewer than three
    points."""
    s = np.asarray(s, dtype=float)
    v2 = np.asarray(values, dtype=float).reshape(len(s), -1)
    keep = (s > 0) & (s >= s.max() / 10**decades)
    out = np.full(v2.shape[1], np.nan)
    for b in range(v2.shape[1]):
        ok = keep & np.isfinite(v2[:, b]) & (v2[:, b] > 0)
        if ok.sum() >= 3:
            out[b] = stats.fit_slope(s[ok], v2[ok, b], stderr=True)[1]
    return out


def distance_falls_like_one_over_s(P, S: Target, T: Training) -> Claim:
    """The book's observation (``book-obs-gf-rate``): over the last decade of normalized time
    the distance to ``W*`` falls like ``s^-1`` (frozen activation patterns; a linear model's
    direction converges like ``1/log t = O(1/s)``, Soudry et al. 2018). Both ends of each run's
    slope +- 3 standard errors must lie in ``[-1.5, -0.5]``, which separates ``s^-1`` from the
    neighbouring rates ``s^-1/2`` and ``s^-2``."""
    slopes = rate_slopes(S, T)
    se = slope_standard_errors(T.run.s, distance_history(S, T))
    return Claim(
        "distance_falls_like_one_over_s",
        "observation",
        statement="book-obs-gf-rate",
        value=np.concatenate([slopes - 3 * se, slopes + 3 * se]),
        bound=(-1.5, -0.5),
        op="in",
        detail=f"end of slope ± 3 SE (log ‖W~ − W*‖ vs log s, last decade) farthest out, "
        f"over {T.B} runs",
    )


def margins_within_lipschitz_bound(P, S: Target, T: Training) -> Claim:
    """Sanity (exact, 1-Lipschitz ``phi``, ``||a|| = 1``): ``|y_i f(x_i; W~) - 1| <=
    ||W~ - W*||_2 R_max``."""
    return Claim(
        "margins_within_lipschitz_bound",
        "sanity",
        bound=SOLVER_TOL,
        op="<=",
        value=(T.final.margin_max_dev - T.final.dist_op * S.asm.R_max).to_numpy(),
        detail="largest max_i |y_i f(x_i; W~) − 1| minus ‖W~ − W*‖₂ R_max",
    )


def training_claims(P, S: Target, T: Training, hyp, *, reached) -> list[Claim]:
    """The checks of the trained runs, in the page's order (``hyp``:
    :func:`near_orthogonality`; ``reached``: :func:`loss_below_log2_over_n`)."""
    return [
        thm34_loss_below_log2_over_n(P, T, hyp),
        thm31_direction_is_kkt_point(P, T, reached),
        item1_margins(P, T, hyp),
        item2_rows_collapse(P, T, hyp),
        item3_rank_two(P, T, hyp),
        item5_convex_optimum(P, T, hyp),
        item6_linear_boundary(P, T, hyp),
        item7_z_ratio(P, S, T, hyp),
        item2_multipliers_in_range(P, S, T, hyp),
        item2_sign_pattern(P, T, hyp),
        item4_unique_optimum(P, T, hyp),
        item4_no_feasible_point_below_wstar(P, S, T, hyp),
        distance_falls_like_one_over_s(P, S, T),
        margins_within_lipschitz_bound(P, S, T),
    ]


def end_distances(T: Training) -> list[float]:
    """The largest distance to ``W*`` at the end, per initialization scale (:data:`MULTS`)."""
    return [float(T.final.dist_to_convex[T.final.config % 3 == b].max()) for b in range(3)]


def reading_figure(P, T: Training) -> str:
    """The page's sentence on how the curves of the three scales are ordered at the end,
    decided from the run (the initial weights are diluted like ``1/s``)."""
    small, default, large = end_distances(T)
    if small < default < large:
        return (
            "The initial weights are a fixed part of $W$ that the growing learned part dilutes "
            "like $1/s$, so the larger they are, the higher the line on which a curve falls: "
            f"here the small start ends {factor_text(large / small)} times closer to $W^*$ "
            "than the large one."
        )
    return (
        "The initial weights are a fixed part of $W$ that the growing learned part dilutes "
        "like $1/s$; here the end distances are not ordered by the scale of the start "
        "(small, default, large above), so that dilution is not what orders them in this run."
    )


# --- step 3: the discretisation ---------------------------------------------------------------


@dataclass
class Discretisation:
    """The default initialization of the first direction run with the page's step and with a
    four times smaller one, to the same normalized time ``s``.

    Attributes:
        s: the normalized time of the comparison (50, or a quarter of the main run).
        step_gap: ``||W/||W|| (step) - W/||W|| (step / 4)||_F``.
        to_go: the distance of the coarse run's direction to ``W*/||W*||_F``.
    """

    s: float
    step_gap: float
    to_go: float


def discretisation(P, S: Target, T: Training) -> Discretisation:
    """Rerun the default initialization of the first direction (run 1 of ``T``) with steps
    ``lr`` and ``lr / 4`` to ``s = min(50, steps lr / 4)`` and compare the directions.

    Args:
        P: the validated parameters.
        S: the :class:`Target`.
        T: the :class:`Training` (its initial weights).

    Returns:
        a :class:`Discretisation`.
    """
    lr = S.lr
    s_cmp = min(50.0, P.steps * lr / 4)
    k1 = max(int(round(s_cmp / lr)), 1)
    device = T.W0.device
    Xt, yt = _t(S.Xc, device), _t(S.y, device)
    fine = flow.normalized_flow(
        S.net, T.W0[1:2], Xt, yt, loss=P.loss, lr=lr / 4, checkpoints=[4 * k1]
    )
    coarse = flow.normalized_flow(S.net, T.W0[1:2], Xt, yt, loss=P.loss, lr=lr, checkpoints=[k1])
    dir_f = fine.W[-1, 0] / torch.linalg.norm(fine.W[-1, 0])
    dir_c = coarse.W[-1, 0] / torch.linalg.norm(coarse.W[-1, 0])
    step_gap = float(torch.linalg.norm(dir_f - dir_c))
    w_star_dir = torch.as_tensor(S.sol.W / np.linalg.norm(S.sol.W))
    to_go = float(torch.linalg.norm(dir_c - w_star_dir))
    return Discretisation(s_cmp, step_gap, to_go)


def step_size_faithful(P, D: Discretisation) -> Claim:
    """Sanity: both step sizes follow the same path, their directions differing by less than
    the distance the direction still has to travel to its limit (the limit does not depend on
    the step)."""
    return Claim(
        "step_size_faithful",
        "sanity",
        value=D.step_gap,
        bound=D.to_go,
        op="<",
        detail="distance between the directions at steps η and η/4, equal s",
    )


def reading_discretisation(P, D: Discretisation) -> str:
    """The sentence comparing the two gaps, decided from the run."""
    if D.step_gap < D.to_go:
        return (
            f"the step changes the path {factor_text(D.to_go / D.step_gap)} times less than "
            "the path still moves."
            if D.to_go >= 2 * D.step_gap
            else "the step changes the path less than the path still moves, but by less than "
            "a factor of 2."
        )
    return "the step changes the path as much as the path still moves: the step is too large."


# --- step 4: the sweep over leaks and widths ---------------------------------------------------


@dataclass
class Sweep:
    """One run per setting ``(gamma, m1, m2)``: ``gamma`` in ``gammas`` and ``(m1, m1)``,
    ``(m1, m2)`` (``m2 = m1 + 1`` when ``m2 = m1``).

    Attributes:
        table: :func:`twolayer.paper_a.flow.leak_sweep`'s table (``gamma, m1, m2, ratio, steps,
            deviation, dist_to_convex, wstar_z_ratio, z_ratio, z_slack, z_bound,
            lambda_in_range``) with ``bound_used = wstar_z_ratio / z_bound``.
        curves: ``{(gamma, m1, m2): (s, distance to W*)}``.
    """

    table: object  # pandas.DataFrame
    curves: dict

    @property
    def tightest(self):
        """The row whose ``W*`` uses the largest share of item 7's bound."""
        return self.table.loc[self.table.bound_used.idxmax()]


def sweep(P) -> Sweep:
    """Theorem 3.2 across leaks and widths (:func:`twolayer.paper_a.flow.leak_sweep`), each on
    the page's data rebuilt for that ``gamma`` with the same ``gap``.

    Args:
        P: the validated parameters.

    Returns:
        a :class:`Sweep`.
    """
    m_pairs = [(P.m1, P.m1), (P.m1, P.m2 if P.m2 != P.m1 else P.m1 + 1)]
    table, curves = flow.leak_sweep(
        n=P.n,
        d=P.d,
        m_pairs=m_pairs,
        gammas=P.gammas,
        gap=P.gap,
        loss=P.loss,
        init_scale=P.init_scale,
        steps=P.sweep_steps,
        tol=P.tol,
        n_test=P.n_test,
        seed=P.seed,
    )
    table["bound_used"] = table.wstar_z_ratio / table.z_bound
    return Sweep(table, curves)


def sweep_near_orthogonality(P, SW: Sweep) -> Hypothesis:
    """Theorem 3.2's assumption on every data set of the sweep."""
    worst = float(SW.table.ratio.max())
    return make_hypothesis(
        "sweep_near_orthogonality",
        title="Theorem 3.2 (sweep data)",
        statement="a-thm-3-2",
        value=worst,
        bound=1.0,
        op="<=",
        reason=f"the sweep's data have n / n_max up to {worst:.3g}",
        detail="largest n / n_max over the sweep's data sets",
    )


def sweep_all_converge(P, SW: Sweep, applies) -> Claim:
    """Corollary 3.5 in every setting: each run's largest deviation from items 1-6 at most
    ``tol`` at the end."""
    return Claim(
        "sweep_all_converge",
        "theorem",
        statement="a-cor-3-5",
        applies=applies,
        value=SW.table.deviation.to_numpy(),
        bound=P.tol,
        op="<=",
        detail="largest deviation from items 1-6 at the end, over the settings",
    )


def sweep_wstar_item7_bound(P, SW: Sweep) -> Claim:
    """Item 7's bound at each setting's ``W*``: sanity, it holds for every optimum of Problem
    (3) (see :func:`wstar_z_ratio_in_bound`)."""
    return Claim(
        "sweep_wstar_item7_bound",
        "sanity",
        statement="a-thm-3-2#7",
        value=(SW.table.wstar_z_ratio - SW.table.z_bound).to_numpy(),
        bound=SOLVER_TOL,
        op="<=",
        detail="largest ‖z‖ / ‖z*‖ at W* minus 2/(κ + γ), over the settings",
    )


def sweep_item7_bound(P, SW: Sweep, applies) -> Claim:
    """Item 7 on each setting's *trained* network: ``||z|| / ||z*||`` exceeds ``2/(kappa +
    gamma)`` by at most ``tol`` of the bound. Sanity, as :func:`item7_z_ratio`: implied by
    the setting's convergence to ``W*`` (:func:`sweep_all_converge`) and the bound at ``W*``."""
    return Claim(
        "sweep_item7_bound",
        "sanity",
        statement="a-thm-3-2#7",
        applies=applies,
        value=(SW.table.z_ratio / SW.table.z_bound - 1).to_numpy(),
        bound=P.tol,
        op="<=",
        detail="largest trained ‖z‖/‖z*‖ over 2/(κ + γ), minus 1, over the settings (implied)",
    )


def sweep_lambda_in_range(P, SW: Sweep, applies) -> Claim:
    """Item 2's interval for the multipliers recovered from each setting's trained rows."""
    return Claim(
        "sweep_lambda_in_range",
        "theorem",
        statement="a-thm-3-2#2",
        applies=applies,
        value=int((~SW.table.lambda_in_range.astype(bool)).sum()),
        bound=0,
        op="==",
        detail="settings with a recovered multiplier outside item 2's interval",
    )


def sweep_claims(P, SW: Sweep, hyp) -> list[Claim]:
    """The sweep's checks, in the page's order (``hyp``: :func:`sweep_near_orthogonality`)."""
    return [
        sweep_all_converge(P, SW, hyp),
        sweep_wstar_item7_bound(P, SW),
        sweep_item7_bound(P, SW, hyp),
        sweep_lambda_in_range(P, SW, hyp),
    ]


def tight_excess(SW: Sweep) -> float:
    """At the tightest setting: ``(||z||/||z*|| - 1) / (2/(kappa + gamma) - 1)`` at ``W*``, the
    share of the bound's excess over 1 that the optimum uses (NaN when the bound is 1)."""
    t = SW.tightest
    return (t.wstar_z_ratio - 1) / (t.z_bound - 1) if t.z_bound > 1 else math.nan


# --- step 5: the phase diagram -------------------------------------------------------------------


@dataclass
class Phase:
    """Theorem 3.2's items on Gaussian data over a grid of ``(n, d)``.

    Attributes:
        grid: ``{n: dimensions}``, log-spaced from ``n`` to ``4 d_suff(n, gamma, 0.01)``.
        table: :func:`twolayer.paper_a.flow.phase_diagram`'s table, one row per draw.
    """

    grid: dict
    table: object  # pandas.DataFrame

    def first_dimensions(self) -> tuple[dict, dict]:
        """Per ``n``: the first ``d`` of the grid from which on every item is certified in
        every draw, and from which on every draw satisfies the assumption."""
        return (
            flow.first_dimension(self.table, "all items"),
            flow.first_dimension(self.table, "holds"),
        )

    def factors(self) -> dict:
        """Per ``n``: ``d_assumption / d_items`` (``nan`` where the grid shows neither)."""
        d_items, d_asm = self.first_dimensions()
        return {nn: d_asm[nn] / d_items[nn] for nn in d_items}

    def summary(self):
        """Per ``(n, d)``: the median ``n / n_max``, the share of draws under the assumption
        and the share certified for each item."""
        return self.table.groupby(["n", "d"], as_index=False).agg(
            ratio=("ratio", "median"),
            holds=("holds", "mean"),
            **{k_: (k_, "mean") for k_ in [*flow.PHASE_ITEMS, "all items"]},
        )


def phase(P, net=None) -> Phase:
    """The phase diagram (:func:`twolayer.paper_a.flow.phase_diagram`) of the page's network on
    ``phase_draws`` Gaussian data sets per ``(n, d)``.

    Args:
        P: the validated parameters.
        net: the network (default: ``LeakyNetwork(m1, m2, gamma)``).

    Returns:
        a :class:`Phase`.
    """
    net = models.LeakyNetwork(P.m1, P.m2, gamma=P.gamma) if net is None else net
    grid = {
        nn: np.unique(
            np.geomspace(nn, 4 * assumptions.sufficient_dimension(nn, P.gamma, 0.01), P.phase_dims)
            .round()
            .astype(int)
        )
        for nn in P.phase_ns
    }
    table = flow.phase_diagram(
        net,
        P.phase_ns,
        grid,
        P.phase_draws,
        loss=P.loss,
        init_scale=P.init_scale,
        steps=P.phase_steps,
        tol=P.tol,
        n_test=P.n_test,
        seed=P.seed,
    )
    return Phase(grid, table)


def phase_items_hold_under_assumption(P, PH: Phase) -> Claim:
    """Theorem 3.2 with Corollary 3.5: wherever a draw satisfies the assumption, every item is
    certified (those draws are run until their deviations reach ``tol``)."""
    held = PH.table[PH.table.holds]
    return Claim(
        "phase_items_hold_under_assumption",
        "theorem",
        statement="a-cor-3-5",
        applies=(len(held) > 0, "no draw of the grid satisfies it"),
        value=int((~held["all items"]).sum()),
        bound=0,
        op="==",
        detail=f"draws under the assumption without all items, of {len(held)}",
    )


def phase_grid_reaches_assumption(P, PH: Phase) -> Claim:
    """Sanity: the grid (up to ``4 d_suff``) reaches draws that satisfy the assumption."""
    return Claim(
        "phase_grid_reaches_assumption",
        "sanity",
        value=int(PH.table.holds.sum()),
        bound=0,
        op=">",
        detail="draws of the grid that satisfy the assumption (the grid ends at 4 d_suff)",
    )


def items_hold_below_assumption(P, PH: Phase) -> Claim:
    """The book's observation (``book-obs-gf-below-assumption``): the items hold from a smaller
    ``d`` of the grid on than the assumption, for some ``n`` (a factor above 1 means at least
    one grid point below; the grid's spacing is the margin). Not applicable where the grid does
    not show, for every ``n``, where the items or the assumption start to hold."""
    factors = PH.factors()
    finite = [f for f in factors.values() if np.isfinite(f)]
    return Claim(
        "items_hold_below_assumption",
        "observation",
        statement="book-obs-gf-below-assumption",
        value=max(finite) if finite else float("nan"),
        bound=1.0,
        op=">",
        applies=(
            len(finite) == len(factors),
            "the grid does not show where the items or the "
            f"assumption start to hold for every n: {factors}",
        ),
        detail="largest d_assumption / d_items over n (first d where each holds)",
    )


def phase_claims(P, PH: Phase) -> list[Claim]:
    """The phase diagram's checks, in the page's order."""
    return [
        phase_items_hold_under_assumption(P, PH),
        phase_grid_reaches_assumption(P, PH),
        items_hold_below_assumption(P, PH),
    ]


def factor_text(f: float) -> str:
    """A factor as the prose reads it: ``nan``; 2 significant digits below 10 (``1.4``, never a
    rounded ``1``); a whole number from 10 on."""
    if not np.isfinite(f):
        return "nan"
    return f"{f:.2g}" if f < 10 else f"{f:.0f}"


def phase_texts(P, PH: Phase) -> dict[str, str]:
    """The page's sentences on the phase diagram (MyST Markdown, no maths), decided from the
    factors ``d_assumption / d_items``: ``phase_factor_text``, ``phase_not_below_text``,
    ``phase_conclusion_text``, ``phase_takeaway_text``."""
    factors = PH.factors()
    not_below = [k_ for k_, f in factors.items() if np.isfinite(f) and f <= 1]
    above = [k_ for k_, f in factors.items() if np.isfinite(f) and f > 1]
    f_min = float(np.nanmin(list(factors.values()))) if factors else math.nan
    every = bool(above) and not not_below and len(above) == len(factors)
    out = {
        "phase_factor_text": ", ".join(
            f"{factor_text(f)} for n = {k_}" for k_, f in factors.items()
        ),
        "phase_not_below_text": "At every n of the grid the items hold below the assumption."
        if not not_below
        else "At n = "
        + ", ".join(str(k_) for k_ in not_below)
        + " they do not: there the first dimension of the grid at which every item is "
        "certified in every draw is not below the first at which every draw satisfies the "
        "assumption. Every draw of an n ran as many steps as the draws under the "
        "assumption needed to reach the tolerance.",
    }
    if above:
        out["phase_conclusion_text"] = (
            "On this grid the conclusions of Theorem 3.2 hold outside its assumption at "
            + ("every n" if every else "some n only")
            + "; the table above gives, item by item, the fraction of draws certified at "
            "each d."
        )
    else:
        out["phase_conclusion_text"] = (
            "On this grid the items are not shown to hold below the assumption at any n."
        )
    if every:
        out["phase_takeaway_text"] = (
            "The assumption is sufficient, not necessary: on Gaussian data the items hold at "
            + (
                f"dimensions {factor_text(f_min)} or more times smaller than the assumption needs"
                if f_min >= 2
                else "smaller dimensions than the assumption needs (by a factor of at least "
                f"{factor_text(f_min)})"
            )
            + ", at every n of this page's grid."
        )
    elif above:
        out["phase_takeaway_text"] = (
            "The assumption is sufficient, not necessary: on Gaussian data the items "
            f"hold below it at n = {', '.join(str(k_) for k_ in above)} of this page's "
            f"grid (by a factor up to {factor_text(max(factors[k_] for k_ in above))}), not "
            "at every n."
        )
    else:
        out["phase_takeaway_text"] = (
            "This page's grid does not show the items holding below the assumption."
        )
    return out


# --- everything -----------------------------------------------------------------------------------


@dataclass
class Result:
    """Every step of the page: :class:`Target`, :class:`Training`, :class:`Discretisation`,
    :class:`Sweep`, :class:`Phase`."""

    target: Target
    training: Training
    discretisation: Discretisation
    sweep: Sweep
    phase: Phase


def compute(P, device=None) -> Result:
    """Run the chapter's five steps in the page's order.

    Args:
        P: the validated parameters (``SPEC.params(...)`` or the page's ``contract.validate()``).
        device: where the main runs compute (``None``: the CPU).

    Returns:
        a :class:`Result`.
    """
    S = target(P)
    T = train(P, S, device)
    D = discretisation(P, S, T)
    SW = sweep(P)
    PH = phase(P, S.net)
    return Result(S, T, D, SW, PH)


def hypotheses(P, R: Result) -> list[Hypothesis]:
    """The page's hypotheses: :func:`near_orthogonality`, :func:`loss_below_log2_over_n`,
    :func:`sweep_near_orthogonality`."""
    return [
        near_orthogonality(P, R.target),
        loss_below_log2_over_n(P, R.training),
        sweep_near_orthogonality(P, R.sweep),
    ]


def claims(P, R: Result) -> list[Claim]:
    """Every check of the page, in its order."""
    hyp, reached, sweep_hyp = hypotheses(P, R)
    return [
        *target_claims(P, R.target, hyp),
        *training_claims(P, R.target, R.training, hyp, reached=reached),
        step_size_faithful(P, R.discretisation),
        *sweep_claims(P, R.sweep, sweep_hyp),
        *phase_claims(P, R.phase),
    ]


def takeaway_convergence(P, hyp: Hypothesis) -> str:
    """The takeaway on convergence to ``W*``, as MyST Markdown: stated where the assumption
    holds (and the page's checks of items 1-7 applied), else what the run does not show."""
    if hyp.holds:
        return (
            "On nearly-orthogonal data every initialization, small or large, in every "
            "direction we tried, reaches the same network $W^*$: the optimum of the convex "
            "Problem (3), of rank 2, with a linear decision boundary and item 7's "
            "predictor-space margin."
        )
    return (
        f"These data do not satisfy Theorem 3.2's assumption (gap = {P.gap:g}), so the "
        "page's checks of items 1-7 do not apply to them; the table above shows how far the "
        "runs still got."
    )
