"""Problems (1) and (3) of Paper A, their multipliers, and certificates of Theorem 3.2.

Notation (Paper A, Section 3; Problems (1) and (3) are our reconstruction, see the book):

* Problem (1): ``min_W 1/2 ||W||_F^2`` s.t. ``y_i f(x_i; W) >= 1``. Its KKT points (Clarke
  subdifferential) are the directions gradient flow converges to (Theorem 3.1).
* Problem (3), convex: ``min_{v,u} m1/2 ||v||^2 + m2/2 ||u||^2`` s.t.
  ``(m1 v.x_i - gamma m2 u.x_i)/sqrt(m) >= 1`` (``i in I+``) and
  ``(m2 u.x_i - gamma m1 v.x_i)/sqrt(m) >= 1`` (``i in I-``). Its dual variables are the
  ``lambda_i`` of Theorem 3.2, item 2 (:func:`vu_from_multipliers`).
* ``W*`` repeats ``v`` on the ``m1`` positive rows and ``u`` on the ``m2`` negative rows
  (:func:`weights_from_vu`); ``z = (m1 v - m2 u)/sqrt(m)`` (item 6); ``z*`` is the l2
  max-margin linear separator (:func:`max_margin_separator`); item 7 bounds
  ``||z|| / ||z*|| <= 2/(kappa + gamma)`` with ``kappa = min(m1, m2)/max(m1, m2)``.
* :func:`three_point_example`: Paper A's example of a KKT point whose ``z`` is not
  max-margin (configuration reconstructed; it reproduces the printed multipliers
  ``8/(4 eps + 5)`` and ``8/5``).

Solvers: cvxpy with Clarabel (an interior-point method), tolerances ``1e-10``.

Chapters: ``paper_a/gradient_flow``, ``paper_a/kkt_not_max_margin`` (and ``paper_a/noisy_xor``
through :mod:`twolayer.paper_a.flow`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch


def _np(a) -> np.ndarray:
    if isinstance(a, torch.Tensor):
        return a.detach().cpu().numpy().astype(np.float64)
    return np.asarray(a, dtype=np.float64)


def _solve(problem, solver: str = "CLARABEL") -> None:
    """Solve to tight tolerances (Clarabel: gaps and feasibility 1e-10); when the solver cannot
    reach them on an ill-conditioned instance, retry once with its default tolerances (1e-8).
    Raises ``RuntimeError`` unless the status is ``optimal``."""
    import cvxpy as cp

    attempts = (
        [dict(tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10), {}]
        if solver == "CLARABEL"
        else [{}]
    )
    status = None
    for kw in attempts:
        fresh = cp.Problem(problem.objective, problem.constraints)  # no state from a failed try
        try:
            fresh.solve(solver=solver, **kw)
        except cp.error.SolverError:
            continue
        status = fresh.status
        if status == cp.OPTIMAL:
            return
    raise RuntimeError(f"convex solver {solver} finished with status {status!r}")


def kappa(m1: int, m2: int) -> float:
    """``min(m1, m2) / max(m1, m2)`` (Theorem 3.2, item 7; reconstructed)."""
    return min(m1, m2) / max(m1, m2)


def z_bound(m1: int, m2: int, gamma: float) -> float:
    """Item 7's bound ``2 / (kappa + gamma)`` on ``||z|| / ||z*||``."""
    return 2.0 / (kappa(m1, m2) + gamma)


def multiplier_bounds(X, gamma: float) -> tuple[float, float]:
    """Item 2's open interval ``(1/(2 R_max^2), 3/(2 gamma^2 R_min^2))`` for every ``lambda_i``."""
    norms = np.linalg.norm(_np(X), axis=1)
    return 1.0 / (2.0 * norms.max() ** 2), 3.0 / (2.0 * gamma**2 * norms.min() ** 2)


@dataclass
class Problem3Solution:
    """The optimum ``(v, u)`` of Problem (3), its multipliers and the derived objects."""

    v: np.ndarray
    u: np.ndarray
    lam: np.ndarray  # dual variables, one per training point (item 2's lambda_i)
    m1: int
    m2: int
    gamma: float

    @property
    def W(self) -> np.ndarray:
        return weights_from_vu(self.v, self.u, self.m1, self.m2)

    @property
    def z(self) -> np.ndarray:
        return z_from_vu(self.v, self.u, self.m1, self.m2)


def _check_labels(y) -> np.ndarray:
    y = _np(y)
    if y.ndim != 1 or not np.all(np.abs(y) == 1):
        raise ValueError("y must be a vector with entries in {-1, +1}")
    return y


def solve_problem3(
    X, y, m1: int, m2: int, *, gamma: float, solver: str = "CLARABEL"
) -> Problem3Solution:
    """Solve the convex Problem (3) (Theorem 3.2, item 5) with its duals ``lambda_i``."""
    import cvxpy as cp

    X, y = _np(X), _check_labels(y)
    n, d = X.shape
    m = m1 + m2
    s = math.sqrt(m)
    v, u = cp.Variable(d), cp.Variable(d)
    pos = (y > 0).astype(float)
    neg = 1.0 - pos
    # one constraint per point: y_i = +1 -> (m1 v.x - gamma m2 u.x)/sqrt m >= 1, else mirrored
    expr = cp.multiply(pos, (m1 * (X @ v) - gamma * m2 * (X @ u)) / s) + cp.multiply(
        neg, (m2 * (X @ u) - gamma * m1 * (X @ v)) / s
    )
    con = expr >= 1
    prob = cp.Problem(cp.Minimize(m1 / 2 * cp.sum_squares(v) + m2 / 2 * cp.sum_squares(u)), [con])
    _solve(prob, solver)
    return Problem3Solution(
        np.asarray(v.value), np.asarray(u.value), np.asarray(con.dual_value), m1, m2, float(gamma)
    )


def max_margin_separator(X, y, solver: str = "CLARABEL") -> tuple[np.ndarray, np.ndarray]:
    """``z* = argmin ||z||^2 / 2`` s.t. ``y_i z.x_i >= 1`` (the l2 max-margin linear separator
    through the origin) and its dual variables ``mu_i`` (``z* = sum_i mu_i y_i x_i``)."""
    import cvxpy as cp

    X, y = _np(X), _check_labels(y)
    z = cp.Variable(X.shape[1])
    con = cp.multiply(y, X @ z) >= 1
    _solve(cp.Problem(cp.Minimize(cp.sum_squares(z) / 2), [con]), solver)
    return np.asarray(z.value), np.asarray(con.dual_value)


def weights_from_vu(v, u, m1: int, m2: int) -> np.ndarray:
    """``W`` with ``v`` on the first ``m1`` rows and ``u`` on the last ``m2``."""
    v, u = _np(v), _np(u)
    return np.concatenate([np.tile(v, (m1, 1)), np.tile(u, (m2, 1))])


def z_from_vu(v, u, m1: int, m2: int) -> np.ndarray:
    """``z = (m1 v - m2 u)/sqrt(m)`` (Theorem 3.2, item 6)."""
    return (m1 * _np(v) - m2 * _np(u)) / math.sqrt(m1 + m2)


def group_means(W, m1: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean positive row ``v`` and mean negative row ``u`` of ``W`` (``(..., m, d)``)."""
    W = _np(W)
    return W[..., :m1, :].mean(axis=-2), W[..., m1:, :].mean(axis=-2)


def z_from_weights(W, m1: int) -> np.ndarray:
    """``sum_j sign(a_j) w_j / sqrt(m)``: equals ``z`` of item 6 when the rows have collapsed."""
    W = _np(W)
    return (W[..., :m1, :].sum(axis=-2) - W[..., m1:, :].sum(axis=-2)) / math.sqrt(W.shape[-2])


def vu_from_multipliers(lam, X, y, m: int, *, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """Item 2: ``v = (sum_{I+} lam_i x_i - gamma sum_{I-} lam_i x_i)/sqrt(m)``, ``u`` mirrored."""
    lam, X, y = _np(lam), _np(X), _check_labels(y)
    pos, neg = lam * (y > 0), lam * (y < 0)
    v = (pos @ X - gamma * (neg @ X)) / math.sqrt(m)
    u = (neg @ X - gamma * (pos @ X)) / math.sqrt(m)
    return v, u


def multipliers_from_vu(v, u, X, y, *, m: int, gamma: float) -> tuple[np.ndarray, float]:
    """Invert item 2 by least squares: the ``lambda`` whose ``(v, u)`` is closest to the given
    pair, and the relative residual ``||(v, u) - (v, u)(lambda)|| / ||(v, u)||`` (0 when
    ``(v, u)`` lies in the form item 2 prescribes)."""
    v, u, X, y = _np(v), _np(u), _np(X), _check_labels(y)
    pos, neg = (y > 0).astype(float), (y < 0).astype(float)
    s = math.sqrt(m)
    Av = (X.T * (pos - gamma * neg)) / s  # d x n: v = Av @ lam
    Au = (X.T * (neg - gamma * pos)) / s
    A = np.concatenate([Av, Au])
    b = np.concatenate([v, u])
    lam, *_ = np.linalg.lstsq(A, b, rcond=None)
    res = float(np.linalg.norm(A @ lam - b) / max(np.linalg.norm(b), 1e-300))
    return lam, res


def problem1_kkt_residual(net, W, X, y, *, lam) -> dict[str, float]:
    """KKT residuals of Problem (1) at ``W`` with multipliers ``lam`` (Paper A, Appendix A).

    ``stationarity``: ``||W - sum_i lam_i y_i grad_W f(x_i; W)||_F / ||W||_F`` with
    ``grad_{w_j} f(x_i) = a_j phi'(w_j.x_i) x_i`` (at a zero pre-activation the library takes
    ``phi' = 1``, an element of the Clarke subdifferential; exact for the optima seen here,
    whose pre-activations are bounded away from 0); ``feasibility``: ``max_i (1 - y_i f)_+``;
    ``slackness``: ``max_i lam_i |y_i f - 1|``; ``dual``: ``max_i (-lam_i)_+``."""
    W = torch.as_tensor(_np(W))
    X, y = torch.as_tensor(_np(X)), torch.as_tensor(_np(y))
    lam_t = torch.as_tensor(_np(lam))
    Z = net.preactivations(W, X)  # m x n
    coef = net.phi.grad(Z) * (lam_t * y).unsqueeze(0) * net.a(W).unsqueeze(-1)
    grad = coef @ X
    q = net.margins(W, X, y)
    return {
        "stationarity": float(torch.linalg.norm(W - grad) / torch.linalg.norm(W)),
        "feasibility": float(torch.clamp(1 - q, min=0).max()),
        "slackness": float((lam_t * (q - 1).abs()).max()),
        "dual": float(torch.clamp(-lam_t, min=0).max()),
    }


def project_rows_onto_span(W, X) -> np.ndarray:
    """Orthogonal projection of every row of ``W`` onto ``span{x_i}`` (gradient flow never moves
    the component outside it, so directions are compared after this projection)."""
    W, X = _np(W), _np(X)
    Q, _ = np.linalg.qr(X.T)  # d x n, orthonormal columns spanning the data
    return (W @ Q) @ Q.T


def certify(net, W, X, y, *, sol: Problem3Solution, z_star, X_test) -> dict[str, float]:
    """Measure items 1-7 of Theorem 3.2 for a trained ``W`` (rows in ``span{x_i}``), against the
    solver's optimum ``sol`` and ``z_star``; ``W`` is first normalized by its smallest margin.

    Returns ``margin_max_dev = max_i |y_i f(x_i; W~) - 1|``, ``row_collapse`` (largest distance
    of a row from its group's mean, over ``||W~||_F``), ``rank_ratio = sigma_3/sigma_1`` (0 when
    ``min(m, d) < 3``), ``dist_to_convex = ||W~ - W*||_F / ||W*||_F``, ``dist_op`` (``||W~ -
    W*||_2``), ``lambda_min``, ``lambda_max``, ``lambda_residual`` (multipliers recovered from
    the group means), ``lambda_in_range``, ``sign_agreement`` (fraction of ``X_test`` with
    ``sign f(x; W~) = sign(z.x)``), ``sign_margin_bound`` (1 minus the fraction of test points
    with ``|f(x; W*)| <= ||W~ - W*||_2 ||x||``: the agreement the Lipschitz bound guarantees
    with ``f(x; W*)``), ``z_ratio = ||z|| / ||z*||``, ``z_slack = ||W~ - W*||_F / ||z*||`` (by
    how much ``z_ratio`` may differ from that of ``W*``: ``||z(W) - z(W')|| <= ||W - W'||_F``),
    ``sign_pattern_min = min_i min(y_i v.x_i, -y_i u.x_i) / ||x_i||`` (item 2's signs hold iff
    it is positive) and ``sign_pattern_slack`` (``max(||v - v*||, ||u - u*||)``: the amount by
    which it may differ from that of ``W*``)."""
    X, y, Xt = (torch.as_tensor(_np(a)) for a in (X, y, X_test))
    Wt = torch.as_tensor(_np(W))
    q = net.margins(Wt, X, y)
    if float(q.min()) <= 0:
        raise ValueError("W does not separate the training data")
    Wn = Wt / q.min()
    qn = q / q.min()
    m1, gamma = net.m1, net.gamma
    Wstar = torch.as_tensor(sol.W)
    delta = Wn - Wstar
    s = torch.linalg.svdvals(Wn)
    v, u = group_means(Wn, m1)
    lam, lam_res = multipliers_from_vu(v, u, X, y, m=net.m, gamma=gamma)
    lo, hi = multiplier_bounds(X, gamma)
    means = torch.cat([torch.as_tensor(v).expand(m1, -1), torch.as_tensor(u).expand(net.m2, -1)])
    z = torch.as_tensor(z_from_vu(v, u, m1, net.m2))
    f_t = net(Wn, Xt)
    f_star = net(Wstar, Xt)
    dist_op = float(torch.linalg.matrix_norm(delta, ord=2))
    guaranteed = float((f_star.abs() > dist_op * torch.linalg.norm(Xt, dim=1)).double().mean())
    norms = torch.linalg.norm(X, dim=1)
    vt, ut = torch.as_tensor(v), torch.as_tensor(u)
    signs = torch.minimum(y * (X @ vt), -y * (X @ ut)) / norms
    slack = max(
        float(torch.linalg.norm(vt - torch.as_tensor(sol.v))),
        float(torch.linalg.norm(ut - torch.as_tensor(sol.u))),
    )
    return {
        "margin_max_dev": float((qn - 1).abs().max()),
        "row_collapse": float(torch.linalg.norm(Wn - means, dim=1).max() / torch.linalg.norm(Wn)),
        "rank_ratio": float(s[2] / s[0]) if s.numel() >= 3 else 0.0,
        "dist_to_convex": float(torch.linalg.norm(delta) / torch.linalg.norm(Wstar)),
        "dist_op": dist_op,
        "lambda_min": float(lam.min()),
        "lambda_max": float(lam.max()),
        "lambda_residual": lam_res,
        "lambda_in_range": bool(lam.min() > lo and lam.max() < hi),
        "sign_agreement": float((torch.sign(f_t) == torch.sign(Xt @ z)).double().mean()),
        "sign_margin_bound": guaranteed,
        "z_ratio": float(torch.linalg.norm(z) / np.linalg.norm(_np(z_star))),
        "z_slack": float(torch.linalg.norm(delta) / np.linalg.norm(_np(z_star))),
        "sign_pattern_min": float(signs.min()),
        "sign_pattern_slack": slack,
    }


DEVIATIONS = ("margin_max_dev", "row_collapse", "rank_ratio", "dist_to_convex", "sign_disagreement")


def deviations(net, W, X, y, *, sol: Problem3Solution, X_test) -> dict[str, np.ndarray]:
    """Items 1, 2 (collapse), 3, 4-5 and 6 of Theorem 3.2 as deviations that vanish at the
    limit, for a batch ``W`` of shape ``(B, m, d)`` (rows in the data's coordinates), each of
    shape ``(B,)``: the quantities of :func:`certify` (``sign_disagreement = 1 -
    sign_agreement``), vectorized. NaN where ``W`` does not separate the data. Used to decide
    how long to run (:func:`twolayer.paper_a.flow.flow_to_tolerance`)."""
    X, y, Xt = (torch.as_tensor(_np(a)) for a in (X, y, X_test))
    W = torch.as_tensor(_np(W))
    if W.ndim == 2:
        W = W[None]
    q = net.margins(W, X, y)
    qmin = q.min(dim=-1).values
    bad = qmin <= 0
    qmin = torch.where(bad, torch.full_like(qmin, float("nan")), qmin)
    Wn = W / qmin[:, None, None]
    m1 = net.m1
    v = Wn[:, :m1].mean(dim=1, keepdim=True)
    u = Wn[:, m1:].mean(dim=1, keepdim=True)
    means = torch.cat([v.expand(-1, m1, -1), u.expand(-1, net.m2, -1)], dim=1)
    fro = torch.linalg.norm(Wn, dim=(-2, -1))
    s = torch.linalg.svdvals(torch.nan_to_num(Wn))
    rank = s[:, 2] / s[:, 0] if s.shape[-1] >= 3 else torch.zeros_like(qmin)
    Ws = torch.as_tensor(sol.W)
    z = (m1 * v[:, 0] - net.m2 * u[:, 0]) / math.sqrt(net.m)
    f = net(torch.nan_to_num(Wn), Xt)
    lin = torch.sign(z @ Xt.T)
    out = {
        "margin_max_dev": (q / qmin[:, None] - 1).abs().max(dim=-1).values,
        "row_collapse": torch.linalg.norm(Wn - means, dim=-1).max(dim=-1).values / fro,
        "rank_ratio": rank,
        "dist_to_convex": torch.linalg.norm(Wn - Ws, dim=(-2, -1)) / torch.linalg.norm(Ws),
        "sign_disagreement": (torch.sign(f) != lin).double().mean(dim=-1),
    }
    return {
        k: torch.where(bad, torch.full_like(qmin, float("nan")), val).numpy()
        for k, val in out.items()
    }


# --- the three-point example (Paper A, Appendix B) ------------------------------------------------

THREE_POINT_GAMMA = 0.5


def three_point_example(eps: float) -> tuple[np.ndarray, np.ndarray]:
    """``x_1 = e_1``, ``x_2 = (-eps, sqrt(1 - eps^2), 0)``, ``x_3 = e_3``, ``y = (+1, -1, -1)``,
    used with ``gamma = 1/2`` and ``m1 = m2`` (our reconstruction of the lost configuration; it
    reproduces the printed multipliers). Theorem 3.2's assumption holds iff ``eps <= 1/72``."""
    if not (0 < eps < 1):
        raise ValueError(f"eps must lie in (0, 1), got {eps}")
    X = np.array([[1.0, 0.0, 0.0], [-eps, math.sqrt(1 - eps * eps), 0.0], [0.0, 0.0, 1.0]])
    return X, np.array([1.0, -1.0, -1.0])


def three_point_multipliers(eps: float) -> np.ndarray:
    """The printed multipliers ``(8/(4 eps + 5), 8/(4 eps + 5), 8/5)``."""
    a = 8.0 / (4.0 * eps + 5.0)
    return np.array([a, a, 8.0 / 5.0])


def three_point_kkt_system(eps: float, m: int = 2, gamma: float = THREE_POINT_GAMMA) -> np.ndarray:
    """Solve the KKT system of Problem (3) for the three-point example with every constraint
    active (``m1 = m2 = m/2``): substitute item 2's ``v(lambda), u(lambda)`` into the three
    equalities, a 3 x 3 linear system ``M lambda = 1``."""
    X, y = three_point_example(eps)
    m1 = m2 = m // 2
    cols = []
    for k in range(3):
        e = np.zeros(3)
        e[k] = 1.0
        v, u = vu_from_multipliers(e, X, y, m, gamma=gamma)
        pos = (m1 * X @ v - gamma * m2 * X @ u) / math.sqrt(m)
        neg = (m2 * X @ u - gamma * m1 * X @ v) / math.sqrt(m)
        cols.append(np.where(y > 0, pos, neg))
    return np.linalg.solve(np.stack(cols, axis=1), np.ones(3))


def kkt_residual(net, W, X, y) -> dict[str, float]:
    """How far the direction of ``W`` is from a KKT point of Problem (1) (Theorem 3.1), with
    multipliers found from ``W`` itself: normalize ``W~ = W / min_i y_i f(x_i; W)``, take
    ``lambda >= 0`` minimizing ``||W~ - sum_i lambda_i y_i grad f(x_i; W~)||_F`` (non-negative
    least squares; the gradient uses ``phi' = 1`` at a zero pre-activation, as
    :func:`problem1_kkt_residual`), and report ``stationarity`` (that minimum over
    ``||W~||_F``), ``slackness`` (``sum_i lambda_i (y_i f(x_i; W~) - 1)`` over ``sum_i
    lambda_i``: multipliers on points whose margin is not the smallest) and their maximum
    ``residual``. Both vanish exactly at a KKT point; raises when ``W`` does not separate."""
    from scipy.optimize import nnls

    W = torch.as_tensor(_np(W))
    X, y = torch.as_tensor(_np(X)), torch.as_tensor(_np(y))
    q = net.margins(W, X, y)
    if float(q.min()) <= 0:
        raise ValueError("W does not separate the training data")
    Wn = W / q.min()
    qn = (q / q.min()).numpy()
    coef = net.phi.grad(net.preactivations(Wn, X)) * y.unsqueeze(0) * net.a(Wn).unsqueeze(-1)
    # column i: vec(y_i grad_W f(x_i; W~)), the rows a_j phi'(w_j.x_i) y_i x_i
    A = (coef.unsqueeze(-1) * X.unsqueeze(0)).permute(1, 0, 2).reshape(X.shape[0], -1).numpy().T
    b = Wn.reshape(-1).numpy()
    lam, res = nnls(A, b)
    stationarity = float(res / np.linalg.norm(b))
    slackness = float(lam @ (qn - 1) / lam.sum()) if lam.sum() > 0 else float("inf")
    return {
        "stationarity": stationarity,
        "slackness": slackness,
        "residual": max(stationarity, slackness),
    }


def angle(a, b) -> float:
    """The angle between two non-zero vectors, ``2 atan2(||a^ - b^||, ||a^ + b^||)`` with unit
    vectors ``a^, b^``: accurate for tiny angles, where ``arccos`` of the cosine is not."""
    a, b = _np(a).ravel(), _np(b).ravel()
    a, b = a / np.linalg.norm(a), b / np.linalg.norm(b)
    return float(2 * np.arctan2(np.linalg.norm(a - b), np.linalg.norm(a + b)))


def three_point_closed_forms(eps: float, gamma: float = THREE_POINT_GAMMA):
    """``(z, z*)`` of the three-point example in closed form: ``z = (1 + gamma)/2 sum_i
    lambda_i y_i x_i`` (item 2 with ``m1 = m2``) with the printed multipliers, and ``z* =
    X^{-1} y`` (the max-margin separator when all three constraints are active, which its
    multipliers ``(X X^T)^{-1} y`` confirm for every ``eps`` in (0, 1))."""
    X, y = three_point_example(eps)
    z = (1 + gamma) / 2 * (three_point_multipliers(eps) * y) @ X
    return z, np.linalg.solve(X, y)


def three_point_table(eps_grid, m_half: int = 1) -> list[dict]:
    """One row per ``eps`` (chapter ``paper_a/kkt_not_max_margin``): Problem (3) solved by
    Clarabel (``lam1, lam2, lam3``) and by the hand-written KKT system, their errors against
    the printed multipliers (``err_printed``, ``err_system``), the solver's ``z`` and ``z*``
    against the closed forms (``err_closed_form``), and from the closed forms: the margins
    ``margin2 = y_2 z.x_2``, ``margin3``, the normalized margins of ``z`` and ``z*``, their
    ``angle``, ``z_ratio = ||z|| / ||z*||`` and whether Theorem 3.2's assumption ``holds``."""
    from .assumptions import near_orthogonality

    rows = []
    for e in np.asarray(eps_grid, dtype=float):
        X, y = three_point_example(float(e))
        sol = solve_problem3(X, y, m_half, m_half, gamma=THREE_POINT_GAMMA)
        z_star, _ = max_margin_separator(X, y)
        z, zs = three_point_closed_forms(float(e))
        printed = three_point_multipliers(float(e))
        marg = y * (X @ z)
        rows.append(
            {
                "eps": float(e),
                "holds": near_orthogonality(X, THREE_POINT_GAMMA).holds,
                "lam1": sol.lam[0],
                "lam2": sol.lam[1],
                "lam3": sol.lam[2],
                "err_printed": float(np.abs(sol.lam - printed).max()),
                "err_system": float(
                    np.abs(sol.lam - three_point_kkt_system(float(e), m=2 * m_half)).max()
                ),
                "err_closed_form": float(max(np.abs(sol.z - z).max(), np.abs(z_star - zs).max())),
                "margin2": marg[1],
                "margin3": marg[2],
                "nmargin_z": marg.min() / np.linalg.norm(z),
                "nmargin_zstar": (y * (X @ zs)).min() / np.linalg.norm(zs),
                "angle": angle(z, zs),
                "z_ratio": np.linalg.norm(z) / np.linalg.norm(zs),
            }
        )
    return rows
