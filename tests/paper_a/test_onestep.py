"""Tests of twolayer.paper_a.onestep (the runners of the one_step_low_rank chapter) and of the
bounds it uses from twolayer.paper_a.lowrank: Fact E.7 and Lemma E.3 metrics, the smoothness and
proxy-PL constants and the risk rate under (A1)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import torch

from twolayer.paper_a import losses, lowrank, onestep

LOGISTIC = losses.get_loss("logistic")


@pytest.fixture(scope="module")
def small():
    return onestep.setup(6, 60, 12, 0.5, seed=1, data_ratio=0.5)


def _paper_grad0_norm(X, y, m, gamma):
    """``||grad L(0)||_F`` by autograd of Paper A's empirical logistic risk, written out from
    the paper: ``f(x; W) = sum_j a_j phi(<w_j, x>)`` with ``a_j = +-1/sqrt(m)`` (half each) and
    ``phi(z) = gamma z + (1 - gamma) log((1 + e^z) / 2)``."""
    W = torch.zeros(m, X.shape[1], dtype=torch.float64, requires_grad=True)
    a = torch.tensor([1.0] * (m - m // 2) + [-1.0] * (m // 2), dtype=torch.float64) / m**0.5
    z = X @ W.T
    phi = gamma * z + (1 - gamma) * torch.log((1 + torch.exp(z)) / 2)
    risk = torch.log1p(torch.exp(-y * (phi @ a))).mean()
    risk.backward()
    return float(torch.linalg.matrix_norm(W.grad))


def test_setup_constants(small):
    s = small
    assert s.X.shape == (6, 60) and s.net.m == 12
    assert s.consts.condition_ratio == pytest.approx(0.5, rel=1e-9)
    # (A1) from the paper's text: alpha <= gamma^2 / (5 n R_max^2 R^2 C_R max(1, H)) with
    # R = R_max / R_min, C_R = 10 R^2 / gamma^2 + 10, and H = 1/4 (the smoothed leaky ReLU is
    # 1/4-smooth), so max(1, H) = 1; R_min, R_max from the rows of X
    norms = np.linalg.norm(s.X.numpy(), axis=1)
    R2 = (norms.max() / norms.min()) ** 2
    C_R = 10 * R2 / 0.5**2 + 10
    assert s.alpha_A1 == pytest.approx(0.5**2 / (5 * 6 * norms.max() ** 2 * R2 * C_R), rel=1e-12)
    # ||grad L(0)||_F by autograd of the paper's risk
    assert s.grad0 == pytest.approx(_paper_grad0_norm(s.X, s.y, 12, 0.5), rel=1e-12)
    # (A2) at omega_A2, by its realized quantities on 100 draws (lowrank.init_condition
    # measures |f(x_k; W0)| and the init against the first step): it holds on every draw, and
    # the bound is not loose: (b) binds, its ||W0||_F <= omega (sqrt(md) + t) is tight up to
    # t / sqrt(md) = 13 % and the gradient term is negligible at this step, so 1.5 times omega
    # violates (b) on every draw (||W0||_F fluctuates by ~3 %)
    lr = torch.full((100,), s.alpha, dtype=torch.float64)
    for mult, share in ((1.0, 1.0), (1.5, 0.0)):
        W0 = s.net.init(60, mult * s.omega_A2, seed=2, batch=100)
        real = lowrank.init_condition(s.net, W0, s.X, s.y, lr=lr, gamma=0.5, eps=0.05)
        assert real["holds"].mean() == share, (mult, real["step_ratio"].min())
    # the init over the first step grows linearly with omega
    r = s.init_over_step([s.omega_A2, 10 * s.omega_A2])
    assert r[1] == pytest.approx(10 * r[0])


def test_run_batch_inside_and_outside_A2(small):
    s = small
    omega = np.array([1.0, 1.0, 1e4]) * s.omega_A2
    b = onestep.run_batch(s, omega, np.full(3, s.alpha_A1), steps=5, seed=0, records=5)
    h = b.history
    assert h["stable_rank"].shape == (len(b.steps), 3)
    assert h["margins"].shape == (len(b.steps), 3, 6)
    assert h["fact_e7"].shape == (len(b.steps), 3, 2)
    # inside (A2): realized, and one step gives a stable rank below ((1+eps)/(1-eps))^2
    assert b.realized["holds"][:2].all()
    assert (h["stable_rank"][1, :2] <= lowrank.step1_bound(0.05)).all()
    # outside (the answer is no): 1e4 times the bound violates (A2), the rank stays high
    assert not b.realized["holds"][2]
    assert h["stable_rank"][1, 2] > 2
    # init over the first step: about eps at the bound, 1e4 times more at the large init
    assert b.init_over_step[0] <= 0.05 and b.init_over_step[2] > 100
    assert (h["stable_rank"][1] >= b.step1_lower * (1 - 1e-9)).all()
    with pytest.raises(ValueError, match="one value per run"):
        onestep.run_batch(s, omega, np.full(2, s.alpha_A1), steps=1, seed=0)


def test_init_sweep_transition(small):
    s = small
    sw = onestep.init_sweep(s, [1.0, 1e2, 1e4], draws=2, seed=3)
    assert sw["sr1"].shape == (6,) and (sw["multiplier"] == np.repeat([1.0, 1e2, 1e4], 2)).all()
    per_mult = sw["r"] / sw["multiplier"]  # r is linear in the scale (independent draws)
    np.testing.assert_allclose(per_mult, np.median(per_mult), rtol=0.2)
    assert (sw["sr1"][:2] < 1.5).all()  # r about eps: one step to low rank
    assert (sw["sr1"][4:] > 0.5 * sw["sr0"][4:]).all()  # r about 500: no drop
    assert sw["a2_holds"][:2].all() and not sw["a2_holds"][4:].any()


def test_size_sweep_rows():
    rows = onestep.size_sweep(
        {"m": [4, 8], "n": [3, 5]},
        {"n": 4, "d": 30, "m": 6},
        0.5,
        seed=0,
        draws=2,
        long_lr_scale=100.0,
        long_steps=4,
    )
    assert len(rows) == 4 * 3
    kinds = [r["kind"] for r in rows]
    assert kinds.count("one step") == 8 and kinds.count("trajectory") == 4
    # SR(0) is the stable rank of an m x d Gaussian: inside the 0.01 % and 99.99 % quantiles
    # of its law, sampled here (20 000 NumPy draws per shape)
    rng = np.random.default_rng(0)
    band = {}
    for m in {r["m"] for r in rows}:
        G = rng.standard_normal((20_000, m, 30))
        sr = (G**2).sum((1, 2)) / np.linalg.norm(G, ord=2, axis=(1, 2)) ** 2
        band[m] = np.quantile(sr, [1e-4, 1 - 1e-4])
    for r in rows:
        assert r["d"] == 30
        assert band[r["m"]][0] <= r["SR(0)"] <= band[r["m"]][1], (r["m"], r["SR(0)"])
        assert r["lower"] <= r["SR(0)"]
        assert r["A2 holds"] and r["SR(1)"] <= lowrank.step1_bound(0.05)
        assert r["max SR(t>=1)"] <= r["C"]
    assert {r["m"] for r in rows if r["swept"] == "m"} == {4, 8}
    assert [r["steps"] for r in rows if r["kind"] == "trajectory"] == [4] * 4


def _autograd_gram(net, W, X):
    """<grad_W f(x_i; W), grad_W f(x_k; W)> for one W (m, d), by autograd."""
    grads = []
    for i in range(X.shape[0]):
        Wr = W.clone().requires_grad_(True)
        net.forward(Wr, X[i : i + 1]).sum().backward()
        grads.append(Wr.grad.reshape(-1))
    G = torch.stack(grads)
    return G @ G.T


def test_gradient_gram_metric_matches_autograd(small):
    s = small
    W = s.net.init(s.d, 0.3, seed=5, batch=2)
    out = lowrank.gradient_gram_metric(s.net, s.X)(W)
    assert out.shape == (2, 2)
    for b in range(2):
        gram = _autograd_gram(s.net, W[b], s.X)
        xx = s.X @ s.X.T
        pers = (torch.diagonal(gram) / (0.25 * torch.diagonal(xx))).min()
        off = ~torch.eye(6, dtype=torch.bool)
        ratio = (gram.abs()[off] / xx.abs()[off]).max()
        assert float(out[b, 0]) == pytest.approx(float(pers), rel=1e-10)
        assert float(out[b, 1]) == pytest.approx(float(ratio), rel=1e-10)
        assert float(out[b, 0]) >= 1 and float(out[b, 1]) <= 1  # Fact E.7


def test_gradient_bound_metric(small):
    s = small
    W = s.net.init(s.d, 0.5, seed=6, batch=3)
    out = lowrank.gradient_bound_metric(s.net, s.X, s.y, s.consts.R_max)(W)
    _, _, G = s.net.loss_and_grad(W, s.X, s.y, LOGISTIC)
    g = LOGISTIC.g(s.net.margins(W, s.X, s.y)).mean(dim=-1)
    direct = torch.linalg.matrix_norm(G) / (s.consts.R_max * g)
    np.testing.assert_allclose(out.numpy(), direct.numpy(), rtol=1e-10)
    assert (out <= 1).all()  # Lemma E.3


def test_smoothness_and_proxy_pl(small):
    s = small
    beta, mu = lowrank.smoothness(s.consts, s.m), lowrank.proxy_pl_constant(s.consts)
    gen = torch.Generator().manual_seed(0)
    for scale in (0.01, 0.5, 3.0):
        W = torch.randn((12, 60), generator=gen, dtype=torch.float64) * scale
        V = torch.randn((12, 60), generator=gen, dtype=torch.float64)
        V /= torch.linalg.matrix_norm(V)
        h = 1e-3
        Lp, L0, Lm = (
            float(s.net.loss_and_grad(W + c * V, s.X, s.y, LOGISTIC)[0]) for c in (h, 0.0, -h)
        )
        assert abs(Lp - 2 * L0 + Lm) / h**2 <= beta * (1 + 1e-4)  # second derivative <= beta
        _, _, G = s.net.loss_and_grad(W, s.X, s.y, LOGISTIC)
        g = float(LOGISTIC.g(s.net.margins(W, s.X, s.y)).mean())
        assert float(torch.linalg.matrix_norm(G)) >= mu * g  # proxy-PL
    # without near-orthogonality there is no proxy-PL constant (the answer is no)
    bad = lowrank.DataConstants(4, 1.0, 1.0, 0.5, 0.5, 0.25)
    assert bad.rho >= 1 and lowrank.proxy_pl_constant(bad) == 0.0


def test_risk_rate_and_bound():
    assert lowrank.risk_rate(0.1, 1.0, 0.5) == pytest.approx(
        0.1 * 0.95 * 0.25 / (2 * math.log(2)) ** 2
    )
    assert lowrank.risk_rate(2.0, 1.0, 0.5) == 0.0  # lr beta >= 2: the descent lemma fails
    np.testing.assert_allclose(lowrank.risk_bound(0.5, [1, 11], 0.1), [0.5, 1 / 3])
    assert lowrank.steps_to_reach(0.5, 0.25, 0.1) == pytest.approx(21.0)
    assert lowrank.steps_to_reach(0.5, 0.6, 0.1) == 1.0
    assert math.isinf(lowrank.steps_to_reach(0.5, 0.25, 0.0))


def test_risk_bound_holds_along_gradient_descent():
    # a step 1000 times (A1) still has lr beta < 2: the bound applies and holds
    s = onestep.setup(5, 40, 10, 0.5, seed=2)
    lr = 1000 * s.alpha_A1
    b = onestep.run_batch(s, [s.omega_A2], [lr], steps=100, seed=1, records=10, full=False)
    kappa = lowrank.risk_rate(
        lr, lowrank.smoothness(s.consts, 10), lowrank.proxy_pl_constant(s.consts)
    )
    assert kappa > 0
    t1 = b.steps >= 1
    loss = b.history["loss"][t1, 0]
    assert (b.history["min_margin"][t1, 0] > 0).all()
    assert (loss <= lowrank.risk_bound(loss[0], b.steps[t1], kappa) * (1 + 1e-12)).all()
    # and a bound ten times faster would be violated: the check can fail
    assert (loss > lowrank.risk_bound(loss[0], b.steps[t1], 1e3 * kappa)).any()


def test_monotone_increasing():
    assert onestep.monotone_increasing([[1, 2], [2, 3], [3, 5]]).all()
    assert not onestep.monotone_increasing([[1, 2], [2, 2]])[1]


def test_init_over_step_by_hand():
    """``omega sqrt(m d) / (alpha g0)``: with m = 9, d = 4, alpha = 0.5, g0 = 3 and omega = 2,
    2 x 6 / 1.5 = 8 (and linear in omega)."""
    sizes = {"n": 5, "d": 4, "m": 9, "gamma": 0.1, "alpha_A1": 0.0, "alpha": 0.5, "grad0": 3.0}
    unused = dict.fromkeys(("X", "y", "consts", "bound", "net"))
    S = onestep.Setup(**sizes, **unused)
    assert S.init_over_step(2.0) == pytest.approx(8.0, rel=1e-15)
    np.testing.assert_allclose(S.init_over_step([1.0, 4.0]), [4.0, 16.0], rtol=1e-15)


def test_monotone_increasing_along_the_first_axis_and_without_wrap_around():
    """Strictly increasing down the first axis by default; unsigned integers that fall are
    not read as increasing (no wrap-around in the differences)."""
    v = np.array([[1.0, 3.0], [2.0, 2.0], [3.0, 1.0]])
    assert onestep.monotone_increasing(v).tolist() == [True, False]
    assert onestep.monotone_increasing(v, axis=1).tolist() == [True, False, False]
    assert not onestep.monotone_increasing(np.array([3, 2, 1], dtype=np.uint8))


def _paper_risk(W, X, y, gamma):
    """Paper A's empirical logistic risk ``(1/n) sum_i log(1 + exp(-y_i f(x_i; W)))`` of one
    ``W`` (m, d), its gradient by autograd and the margins ``y_i f(x_i; W)``, written out from
    the paper (``a_j = +-1/sqrt(m)``, half each; ``phi`` the smoothed leaky ReLU)."""
    m = W.shape[0]
    Wt = torch.as_tensor(np.array(W, dtype=np.float64)).requires_grad_(True)
    a = torch.tensor([1.0] * (m - m // 2) + [-1.0] * (m // 2), dtype=torch.float64) / m**0.5
    z = torch.as_tensor(X, dtype=torch.float64) @ Wt.T
    phi = gamma * z + (1 - gamma) * torch.log((1 + torch.exp(z)) / 2)
    q = torch.as_tensor(y, dtype=torch.float64) * (phi @ a)
    risk = torch.log1p(torch.exp(-q)).mean()
    risk.backward()
    return float(risk.detach()), Wt.grad.numpy(), q.detach().numpy()


def test_run_batch_runs_every_step_and_records_40_log_spaced_steps_by_default(small):
    """Without ``records``: 0, 1 and 40 log-spaced steps up to ``steps`` (rounded, unique),
    the last one ``steps`` itself (here 1001 steps, more than the trainer's default 1000)."""
    s = small
    b = onestep.run_batch(s, [s.omega_A2], [s.alpha], steps=1001, seed=0, full=False)
    logspaced = np.round(np.exp(np.linspace(0.0, math.log(1001), 40)))
    expected = np.unique(np.concatenate([[0.0, 1.0], logspaced])).astype(int)
    # 41 or 50 points would give other steps: the count 40 is visible
    for other in (41, 50):
        alt = np.unique(np.round(np.exp(np.linspace(0.0, math.log(1001), other))))
        assert len(alt) + 1 != len(expected)
    np.testing.assert_array_equal(b.steps, expected)
    assert b.steps[-1] == 1001 and b.history["loss"].shape == (len(expected), 1)


def test_run_batch_records_by_hand(small):
    """The returned omega and lr are those given; ``spectral0`` is the largest singular value
    of each run's own draw ``W0``; the recorded loss, margins, stable rank, Lemma E.4's log
    loss ratio, Lemma E.3's gradient ratio and the init over the first step, at ``W0`` and at
    ``W1 = W0 - lr grad L(W0)``, all recomputed from the paper's logistic risk by autograd."""
    s = small
    omega, lr = np.array([0.02, 0.02]), np.array([1e3, 3e3]) * s.alpha
    b = onestep.run_batch(s, omega, lr, steps=1, seed=4, records=2)
    h = b.history
    np.testing.assert_array_equal(b.steps, [0, 1])
    assert b.omega.shape == b.lr.shape == (2,)
    np.testing.assert_array_equal(b.omega, omega)
    np.testing.assert_array_equal(b.lr, lr)
    # one draw per run from the seed: two runs at the same scale start apart
    W0 = s.net.init(s.d, torch.as_tensor(omega), seed=4, batch=2).numpy()
    assert b.spectral0[0] != b.spectral0[1]
    X, y = s.X.numpy(), s.y.numpy()
    R_max = np.linalg.norm(X, axis=1).max()
    for k in range(2):
        sv = np.linalg.svd(W0[k], compute_uv=False)
        assert b.spectral0[k] == pytest.approx(sv[0], rel=1e-12)
        assert h["stable_rank"][0, k] == pytest.approx((sv**2).sum() / sv[0] ** 2, rel=1e-10)
        risk0, G0, _ = _paper_risk(W0[k], X, y, s.gamma)
        fro0, gfro = np.linalg.norm(W0[k]), np.linalg.norm(G0)
        assert b.init_over_step[k] == pytest.approx(fro0 / (lr[k] * gfro), rel=1e-10)
        for t, W in enumerate((W0[k], W0[k] - lr[k] * G0)):
            risk, G, q = _paper_risk(W, X, y, s.gamma)
            g = 1 / (1 + np.exp(q))  # -l'(q) of the logistic loss
            assert h["loss"][t, k] == pytest.approx(risk, rel=1e-10)
            np.testing.assert_allclose(h["margins"][t, k], q, rtol=1e-9)
            assert h["log_loss_ratio"][t, k] == pytest.approx(np.log(g.max() / g.min()), rel=1e-8)
            ratio = np.linalg.norm(G) / (R_max * g.mean())
            assert h["grad_bound_e3"][t, k] == pytest.approx(ratio, rel=1e-10)


def test_run_batch_default_eps_is_five_percent(small):
    """(A2)(b) is checked at ``eps = 0.05`` by default: at 5 times the bound the realized step
    ratio ``(||W0||_F + lr ||grad L(W0) - grad L(0)||_F) / (lr ||grad L(0)||_F)`` (by hand) is
    about 0.22, so (A2) fails at 0.05 and holds at eps = 0.5."""
    s = small
    omega = [5 * s.omega_A2]
    runs = {
        eps: onestep.run_batch(s, omega, [s.alpha], 1, seed=2, records=2, full=False, **kw)
        for eps, kw in (("default", {}), (0.05, {"eps": 0.05}), (0.5, {"eps": 0.5}))
    }
    W0 = s.net.init(s.d, omega[0], seed=2).numpy()
    X, y = s.X.numpy(), s.y.numpy()
    _, G, _ = _paper_risk(W0, X, y, s.gamma)
    _, G0, _ = _paper_risk(np.zeros_like(W0), X, y, s.gamma)
    ratio = (np.linalg.norm(W0) + s.alpha * np.linalg.norm(G - G0)) / (s.alpha * np.linalg.norm(G0))
    assert 0.05 < ratio < 0.5
    for b in runs.values():
        assert b.realized["step_ratio"][0] == pytest.approx(ratio, rel=1e-9)
        assert b.realized["f_max"][0] < 1 / 50
    assert not runs["default"].realized["holds"][0] and not runs[0.05].realized["holds"][0]
    assert runs[0.5].realized["holds"][0]


def test_run_batch_takes_scalars_and_exact_fractions_as_one_run_each(small):
    """A scalar omega or lr (a Python float) is one run, and exact fractions are read as their
    float values: every mix gives the run of the float lists."""
    s = small
    omega, lr = 3 * s.omega_A2, 2 * s.alpha
    ref = onestep.run_batch(s, [omega], [lr], steps=2, seed=1, records=3, full=False)
    for o, a in (
        (omega, [lr]),
        ([omega], lr),
        (omega, lr),
        ([Fraction(omega)], [Fraction(lr)]),
    ):
        b = onestep.run_batch(s, o, a, steps=2, seed=1, records=3, full=False)
        assert b.omega.shape == b.lr.shape == (1,)
        assert b.omega.dtype == b.lr.dtype == np.float64
        assert b.omega[0] == omega and b.lr[0] == lr
        np.testing.assert_array_equal(b.history["stable_rank"], ref.history["stable_rank"])
        np.testing.assert_array_equal(b.init_over_step, ref.init_over_step)


def test_run_batch_in_float32_computes_every_metric_in_float32(small):
    """With ``dtype="float32"`` every returned quantity is computed in float32 (the run's
    dtype, the init over the first step included) and agrees with the float64 run to float32
    precision."""
    s = small
    omega, lr = np.full(2, 10 * s.omega_A2), np.full(2, s.alpha)
    b64 = onestep.run_batch(s, omega, lr, steps=1, seed=3, records=2, full=False)
    b32 = onestep.run_batch(s, omega, lr, steps=1, seed=3, records=2, full=False, dtype="float32")
    for name in ("spectral0", "step1_lower", "init_over_step"):
        got, want = getattr(b32, name), getattr(b64, name)
        assert got.dtype == np.float32, name
        np.testing.assert_allclose(got, want, rtol=1e-4, err_msg=name)
    assert b32.realized["step_ratio"].dtype == np.float32
    assert b32.history["stable_rank"].dtype == np.float32
    np.testing.assert_allclose(b32.history["stable_rank"], b64.history["stable_rank"], rtol=1e-4)


def test_run_batch_runs_on_the_device_asked_for(small):
    """The runs live on ``device``: on PyTorch's data-less ``meta`` device nothing can be read
    back, so the batch fails instead of running on the CPU."""
    s = small
    with pytest.raises(NotImplementedError):  # reading a meta tensor back
        onestep.run_batch(s, [s.omega_A2], [s.alpha], steps=1, seed=0, device="meta")
