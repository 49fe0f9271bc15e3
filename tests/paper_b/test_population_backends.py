"""Paper B's batched population loss and gradient on NumPy and on torch (any device), and the
batched Stages 1 and 3 against Algorithm 1's per-network functions."""

from __future__ import annotations

import math
import re
import subprocess
import sys

import numpy as np
import pytest
import torch

from twolayer.paper_b import algorithm1 as alg
from twolayer.paper_b import gd_backend as gb
from twolayer.paper_b import kernels
from twolayer.paper_b import population as pop
from twolayer.paper_b import teacher as tmod

F64 = torch.float64
CPU64 = torch.empty(0, dtype=F64)


# --- the implementation before the array-API rewrite (commit ab4c2c9), as a reference ------------


def ref_loss(net, teacher):
    U, n = kernels.unit_rows(net.W)
    Us, ns = kernels.unit_rows(teacher.W)
    c, cs = net.a * n, teacher.a * ns
    ff = (
        c @ kernels.k1(U @ U.T) @ c
        + 2 * net.alpha * kernels.INV_SQRT_2PI * c.sum()
        + net.beta @ (net.a @ net.W)
        + net.alpha**2
        + net.beta @ net.beta
    )
    fy = c @ kernels.kappa2(U @ Us.T) @ cs
    return max(float(ff - 2 * fy + teacher.target_norm2()), 0.0)


def ref_grad(net, teacher, lam=0.0):
    """The gradient as the benchmark keeps it: the NumPy code before the rewrite."""
    from twolayer.tools.bench.paper_b import _paperb_grad_before

    return pop.Net(*_paperb_grad_before(net, teacher, lam))


def awkward_net(m, d, seed, teacher):
    """Exactly aligned, anti-aligned and duplicated neurons, and a zero neuron with a = 0."""
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((m, d)) / math.sqrt(d)
    W[0] = 0.7 * teacher.W[0]
    W[1] = -1.3 * teacher.W[1]
    W[2] = 2.0 * W[3]
    W[4] = 0.0
    a = rng.standard_normal(m)
    a[4] = 0.0
    return pop.Net(a, W, 0.3 * (seed + 1), 0.1 * rng.standard_normal(d))


def cone_net(teacher):
    """:func:`awkward_net` (width 7, d = 8) with ``a_4 = 1.5`` at its zero neuron ``w_4 = 0``:
    the loss does not depend on ``a_4`` there, and is a cone, not differentiable, in ``w_4``."""
    net = awkward_net(7, 8, 0, teacher)
    net.a[4] = 1.5
    return net


def assert_close_in_max_norm(x, ref, rel=1e-12):
    """``max |x - ref| <= rel * max |ref|`` over flat arrays (a gradient or a network)."""
    x, ref = np.ravel(x), np.ravel(ref)
    assert np.abs(x - ref).max() <= rel * np.abs(ref).max()


def assert_same_gradient(g, g_ref):
    """Two batched gradients ``(ga, gW, galpha, gbeta)`` equal bit for bit, any namespace."""
    for x, y in zip(g, g_ref, strict=True):
        np.testing.assert_array_equal(pop.to_numpy(x), pop.to_numpy(y))


@pytest.fixture(scope="module")
def teachers():
    return [
        tmod.prototype(d=8, seed=0),
        tmod.random_teacher(8, 3, 4, seed=1),
        tmod.random_teacher(8, 2, 2, seed=2),
    ]


@pytest.fixture(scope="module")
def nets(teachers):
    # three widths: the batch pads them with zero neurons
    return [awkward_net(m, 8, s, t) for s, (m, t) in enumerate(zip([7, 9, 6], teachers))]


# --- the per-network functions keep their numbers ------------------------------------------------


@pytest.mark.parametrize("lam", [0.0, 0.07])
def test_per_net_functions_equal_the_previous_implementation(nets, teachers, lam):
    for net, t in zip(nets, teachers):
        g, r = pop.grad(net, t, lam).flat(), ref_grad(net, t, lam).flat()
        assert_close_in_max_norm(g, r)
        assert pop.loss(net, t) == pytest.approx(ref_loss(net, t), rel=1e-12, abs=1e-15)
        L, g2 = pop.loss_and_grad(net, t, lam)
        assert L == pytest.approx(pop.loss(net, t), rel=1e-13)
        assert np.array_equal(g2.flat(), pop.grad(net, t, lam).flat())


def test_paper_profile_shape_equals_previous_implementation():
    t = tmod.random_teacher(50, 2, 3, 0)
    net = alg.stage1(alg.symmetric_init(50, 400, 0), t)  # duplicated neurons: t = 1 exactly
    g, r = pop.grad(net, t, 0.01).flat(), ref_grad(net, t, 0.01).flat()
    assert_close_in_max_norm(g, r)
    assert pop.loss(net, t) == pytest.approx(ref_loss(net, t), rel=1e-12)


# --- batched: NumPy and torch against the per-network functions ---------------------------------


@pytest.mark.parametrize("like", [None, CPU64], ids=["numpy", "torch"])
def test_batched_equals_per_net(nets, teachers, like):
    b = pop.NetBatch.from_nets(nets, like)
    assert b.W.shape == (3, 9, 8) and b.widths == (7, 9, 6)
    ta = pop.teacher_arrays(teachers, like=b.W)
    lam = pop._like(np.array([0.0, 0.05, 0.2]), b.W if like is not None else None)
    L, (ga, gW, galpha, gbeta) = pop.loss_and_grad_batched(*b.arrays(), teacher=ta, lam=lam)
    assert type(L) is type(b.W)
    grads = pop.NetBatch(ga, gW, galpha, gbeta, b.widths, b.dims).to_nets()
    for k, (net, t) in enumerate(zip(nets, teachers)):
        r = ref_grad(net, t, [0.0, 0.05, 0.2][k])
        assert_close_in_max_norm(grads[k].flat(), r.flat())
        assert float(pop.to_numpy(L)[k]) == pytest.approx(ref_loss(net, t), rel=1e-12)
    # the padding neurons have zero gradient (they stay zero under gradient descent)
    gWn, gan = pop.to_numpy(gW), pop.to_numpy(ga)
    assert np.all(gWn[0, 7:] == 0) and np.all(gan[0, 7:] == 0) and np.all(gWn[2, 6:] == 0)
    Lb = pop.loss_batched(*b.arrays(), teacher=ta)
    np.testing.assert_allclose(pop.to_numpy(Lb), pop.to_numpy(L), rtol=1e-13)
    g2 = pop.grad_batched(*b.arrays(), teacher=ta, lam=lam)
    np.testing.assert_array_equal(pop.to_numpy(g2[1]), gWn)


def test_one_teacher_for_all_configurations(nets, teachers):
    b = pop.NetBatch.from_nets(nets)
    one = pop.teacher_arrays(teachers[0], batch=3)
    many = pop.teacher_arrays([teachers[0]] * 3)
    np.testing.assert_array_equal(
        pop.loss_batched(*b.arrays(), teacher=one), pop.loss_batched(*b.arrays(), teacher=many)
    )
    with pytest.raises(ValueError, match="teachers"):
        pop.teacher_arrays(teachers, batch=2)


@pytest.mark.parametrize("like", [None, CPU64], ids=["numpy", "torch"])
def test_batched_gradient_matches_finite_differences(nets, teachers, like):
    """Central differences of the batched loss in every coordinate, at exactly aligned,
    anti-aligned, duplicated and zero neurons (``a_i = 0``, where the loss is smooth)."""
    lam = 0.07
    b = pop.NetBatch.from_nets(nets[:2])
    flat = np.concatenate([x.reshape(2, -1) for x in b.arrays()], axis=1)  # (2, P)
    shapes = [x.shape for x in b.arrays()]

    def unflat(v):
        out, i = [], 0
        for s in shapes:
            k = int(np.prod(s[1:]))
            out.append(pop._like(v[:, i : i + k].reshape(s), like))
            i += k
        return out

    def reg(v):
        a, W, alpha, beta = unflat(v)
        L = pop.to_numpy(
            pop.loss_batched(a, W, alpha, beta, teacher=pop.teacher_arrays(teachers[:2], like=W))
        )
        a, W = pop.to_numpy(a), pop.to_numpy(W)
        return L + 0.5 * lam * ((a * a).sum(-1) + (W * W).sum((-2, -1)))

    _, g = pop.loss_and_grad_batched(
        *unflat(flat), teacher=pop.teacher_arrays(teachers[:2], like=unflat(flat)[1]), lam=lam
    )
    g = np.concatenate([pop.to_numpy(x).reshape(2, -1) for x in g], axis=1)
    h = 1e-6
    fd = np.empty_like(flat)
    for i in range(flat.shape[1]):
        e = np.zeros_like(flat)
        e[:, i] = h
        fd[:, i] = (reg(flat + e) - reg(flat - e)) / (2 * h)
    assert np.all(np.isfinite(g))
    assert np.abs(fd - g).max() < 1e-7 * max(1.0, np.abs(g).max())


def test_zero_norm_neuron_with_nonzero_a_is_finite(teachers):
    """At ``w_i = 0`` with ``a_i != 0`` the loss is not differentiable in ``w_i`` (a cone);
    the gradient stays finite and its ``a_i`` component is exact (``L`` does not depend on
    ``a_i`` there: ``lam a_i`` from the weight decay only)."""
    net = cone_net(teachers[0])
    g = pop.grad(net, teachers[0], 0.1)
    assert np.all(np.isfinite(g.flat()))
    assert g.a[4] == pytest.approx(0.1 * 1.5, rel=1e-14)
    for like in (None, CPU64):
        b = pop.NetBatch.from_nets(net, like)
        _, gb_ = pop.loss_and_grad_batched(
            *b.arrays(), teacher=pop.teacher_arrays(teachers[0], like=b.W), lam=0.1
        )
        np.testing.assert_allclose(pop.to_numpy(gb_[1])[0], g.W, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("like", [None, CPU64], ids=["numpy", "torch"])
def test_default_lam_is_no_weight_decay(teachers, like):
    """Without ``lam`` the gradient is that of the square loss alone: at a zero neuron
    (``w_i = 0``, ``c_i = a_i ||w_i|| = 0``) the loss does not depend on ``a_i``, so its
    ``a_i`` component is exactly 0 (weight decay would add ``lam a_i``), and elsewhere the
    gradient equals the one with ``lam=0`` given explicitly."""
    net = cone_net(teachers[0])
    b = pop.NetBatch.from_nets(net, like)
    ta = pop.teacher_arrays(teachers[0], like=b.W)
    _, g = pop.loss_and_grad_batched(*b.arrays(), teacher=ta)
    assert float(pop.to_numpy(g[0])[0, 4]) == 0.0
    _, g0 = pop.loss_and_grad_batched(*b.arrays(), teacher=ta, lam=0.0)
    assert_same_gradient(g, g0)


@pytest.mark.parametrize("like", [None, CPU64], ids=["numpy", "torch"])
def test_anti_aligned_student_and_teacher_neurons_stay_finite(like):
    """A student neuron exactly opposite a teacher neuron (``t = -1``): ``U wbar*`` may round
    to ``-1 - 2^-52`` (it does for some of these 40 directions on some BLAS), where an unclipped
    ``sqrt(1 - t^2)`` is NaN. The loss and gradient stay finite and equal the reference
    implementation's, whose kernels clip ``t`` to ``[-1, 1]``."""
    ts = [tmod.random_teacher(8, 1, 1, seed=s) for s in range(40)]
    nets = []
    for s, t in enumerate(ts):
        rng = np.random.default_rng(100 + s)
        W = np.stack([-1.3 * t.W[0], rng.standard_normal(8) / math.sqrt(8)])
        nets.append(pop.Net(np.array([0.8, -0.5]), W, 0.2, 0.1 * rng.standard_normal(8)))
    b = pop.NetBatch.from_nets(nets, like)
    L, g = pop.loss_and_grad_batched(*b.arrays(), teacher=pop.teacher_arrays(ts, like=b.W))
    Ln = pop.to_numpy(L)
    grads = pop.NetBatch(*g, b.widths, b.dims).to_nets()
    for k, (net, t) in enumerate(zip(nets, ts)):
        assert Ln[k] == pytest.approx(ref_loss(net, t), rel=1e-12)
        r = ref_grad(net, t).flat()
        assert np.all(np.isfinite(grads[k].flat()))
        assert_close_in_max_norm(grads[k].flat(), r)


@pytest.mark.parametrize("like", [None, CPU64], ids=["numpy", "torch"])
def test_gradient_at_a_vanishing_neuron_has_its_limit(teachers, like):
    """Along a fixed direction ``u``, the ``w_i``-gradient at ``w_i = s u`` tends to a limit
    as ``s -> 0`` (it depends on ``w_i`` only through ``u`` and ``c_i = a_i s``), so
    ``s = 1e-100`` (still a direction in float64, far above the ``1e-300`` cut-off) gives the
    ``s = 1e-12`` gradient to ``1e-9``."""
    rows = []
    for scale in (1e-12, 1e-100):
        net = cone_net(teachers[0])
        net.W[4] = scale * np.linspace(1.0, -0.4, 8)
        b = pop.NetBatch.from_nets(net, like)
        _, g = pop.loss_and_grad_batched(
            *b.arrays(), teacher=pop.teacher_arrays(teachers[0], like=b.W), lam=0.1
        )
        rows.append(pop.to_numpy(g[1])[0, 4])
    assert np.abs(rows[0]).max() > 0.1
    np.testing.assert_allclose(rows[1], rows[0], rtol=1e-9, atol=0)


@pytest.mark.parametrize("position", range(5))
def test_mixed_array_namespaces_are_refused(nets, teachers, position):
    """One argument (``a``, ``W``, ``alpha``, ``beta`` or the teacher) in NumPy and the rest in
    torch: refused with array-api-compat's "Multiple namespaces" error, not computed in a mix."""
    bn, bt = pop.NetBatch.from_nets(nets), pop.NetBatch.from_nets(nets, CPU64)
    args = list(bt.arrays()) + [pop.teacher_arrays(teachers, like=bt.W)]
    args[position] = (list(bn.arrays()) + [pop.teacher_arrays(teachers)])[position]
    with pytest.raises(TypeError, match="^Multiple namespaces for array inputs"):
        pop.loss_and_grad_batched(*args[:4], teacher=args[4], lam=0.1)


@pytest.mark.parametrize("like", [None, CPU64], ids=["numpy", "torch"])
def test_gradient_only_and_loss_only_calls(nets, teachers, like):
    """``want_loss=False`` returns ``None`` for the loss (as the docstring says) and the same
    gradient; ``want_grad=False`` returns ``None`` for the gradient and the same loss."""
    b = pop.NetBatch.from_nets(nets, like)
    ta = pop.teacher_arrays(teachers, like=b.W)
    L, g = pop.loss_and_grad_batched(*b.arrays(), teacher=ta, lam=0.1)
    L2, g2 = pop.loss_and_grad_batched(*b.arrays(), teacher=ta, lam=0.1, want_loss=False)
    assert L2 is None
    assert_same_gradient(g2, g)
    L3, g3 = pop.loss_and_grad_batched(*b.arrays(), teacher=ta, lam=0.1, want_grad=False)
    assert g3 is None
    np.testing.assert_allclose(pop.to_numpy(L3), pop.to_numpy(L), rtol=1e-13)


@pytest.mark.parametrize("like", [None, CPU64], ids=["numpy", "torch"])
def test_a_student_equal_to_the_target_has_zero_loss(like):
    """``relu(w.x) = ||w|| / sqrt(2 pi) + (w.x) / 2 + relu_{>=2}(w.x)`` (the degree-0 and -1
    Hermite parts of ``relu`` of a standard Gaussian are ``1/sqrt(2 pi)`` and ``1/2``), so the
    student ``a = a*``, ``W = W*``, ``alpha = -sum_j a*_j ||w*_j|| / sqrt(2 pi)``,
    ``beta = -sum_j a*_j w*_j / 2`` computes the target ``y~`` exactly: its loss is 0 up to
    rounding, and never negative (the expansion cancels to ``-1e-16`` for many of these 80
    teachers; a loss is a mean square)."""
    ts = [tmod.random_teacher(8, 2, 3, seed=s) for s in range(40)]
    ts += [tmod.prototype(8, seed=s) for s in range(40)]
    nets = []
    for t in ts:
        c = t.a * np.linalg.norm(t.W, axis=1)
        nets.append(pop.Net(t.a, t.W, -c.sum() / math.sqrt(2 * math.pi), -0.5 * (t.a @ t.W)))
    b = pop.NetBatch.from_nets(nets, like)
    L = pop.to_numpy(pop.loss_batched(*b.arrays(), teacher=pop.teacher_arrays(ts, like=b.W)))
    assert np.all(L >= 0.0) and L.max() <= 1e-14


def test_autograd_through_arccos_fails_where_the_hand_gradient_does_not():
    """Why the gradient is written by hand: at an exactly aligned pair (``t = 1``) autograd of
    ``||w|| k(t)`` multiplies ``arccos'(1) = -inf`` by ``dt/dw = 0`` and returns NaN; the
    closed form gives the right value ``k(1) wbar = wbar / 2`` (``dt/dw = 0`` there)."""
    e1 = np.eye(4)[0]
    w = torch.tensor(0.7 * e1, requires_grad=True)
    tt = torch.clamp((w / w.norm()) @ torch.tensor(e1), -1, 1)
    assert float(tt.detach()) == 1.0
    k = (torch.sqrt(1 - tt * tt) + (math.pi - torch.arccos(tt)) * tt) / (2 * math.pi)
    (gw,) = torch.autograd.grad(w.norm() * k, w)
    assert torch.isnan(gw).any()
    # a one-neuron student aligned with a one-neuron teacher: the w-gradient of
    # -2 a a* ||w|| ||w*|| kappa2(t) + a^2 ||w||^2 kappa2(1) ... is finite and matches
    # central differences
    t = tmod.Teacher(np.array([1.0]), e1[None, :])
    net = pop.Net(np.array([0.5]), 0.7 * e1[None, :])
    g = pop.grad(net, t)
    assert np.all(np.isfinite(g.flat()))
    h = 1e-6
    fd = (
        pop.loss(pop.Net(net.a, net.W + h * e1), t) - pop.loss(pop.Net(net.a, net.W - h * e1), t)
    ) / (2 * h)
    assert g.W[0, 0] == pytest.approx(fd, rel=1e-7)


def test_torch_path_runs_on_meta_without_host_reads(nets, teachers):
    """The batched torch path is device-clean: it runs on PyTorch's meta device (no data, so
    any host read raises)."""
    from twolayer.core.device import DeviceGuard

    meta = torch.empty(0, dtype=F64, device="meta")
    b = pop.NetBatch.from_nets(nets, meta)
    ta = pop.teacher_arrays(teachers, like=meta)
    lam = torch.full((3,), 0.1, dtype=F64, device="meta")
    with DeviceGuard("meta"):
        L, g = pop.loss_and_grad_batched(*b.arrays(), teacher=ta, lam=lam)
        assert L.device.type == "meta" and all(x.device.type == "meta" for x in g)
        L, g = pop.loss_and_grad_batched(
            *b.arrays(), teacher=ta, lam=0.1
        )  # a float lam is made on the device
    assert g[1].shape == (3, 9, 8)


def test_float32_torch_is_close(nets, teachers):
    b64 = pop.NetBatch.from_nets(nets, CPU64)
    b32 = pop.NetBatch.from_nets(nets, torch.empty(0, dtype=torch.float32))
    _, g64 = pop.loss_and_grad_batched(
        *b64.arrays(), teacher=pop.teacher_arrays(teachers, like=b64.W), lam=0.1
    )
    L32, g32 = pop.loss_and_grad_batched(
        *b32.arrays(), teacher=pop.teacher_arrays(teachers, like=b32.W), lam=0.1
    )
    assert L32.dtype == torch.float32 and torch.all(torch.isfinite(g32[1]))
    # float32 rounding, amplified near t = 1 where sqrt(1 - t^2) has slope 1/sqrt(eps)
    assert float((g32[1].double() - g64[1]).abs().max()) <= 1e-2 * float(g64[1].abs().max())


def test_paper_b_imports_without_torch():
    code = (
        "import sys, numpy as np\n"
        "from twolayer.paper_b import population as pop, gd_backend, teacher, algorithm1 as alg\n"
        "t = teacher.prototype(6, 0)\n"
        "net = alg.stage1(alg.symmetric_init(6, 8, 0), t)\n"
        "pop.grad(net, t, 0.1); pop.loss(net, t)\n"
        "gd_backend.stage3_batched([net], t, 0.02, 1, steps=3, eta=0.1)\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr


# --- Stages 1 and 3, batched ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def stage2_nets():
    """Three configurations after Stage 2: different teachers, seeds and widths."""
    ts = [tmod.prototype(6, 0), tmod.random_teacher(6, 2, 3, 1), tmod.prototype(6, 2)]
    out = []
    for s, (t, m) in enumerate(zip(ts, [12, 10, 8])):
        net1 = alg.stage1(alg.symmetric_init(6, m, s), t)
        out.append(alg.stage2(net1, t, 0.02)[0])
    return out, ts


def assert_trajectories_close(ref, new, tol):
    (nr, trr), (nn, trn) = ref, new
    assert np.abs(nr.flat() - nn.flat()).max() <= tol * max(1.0, np.abs(nr.flat()).max())
    A, Bn = trr.arrays(), trn.arrays()
    for k in ("epoch", "lam", "step"):
        np.testing.assert_array_equal(A[k], Bn[k])
    for k in ("loss", "reg_loss", "grad_norm2"):
        np.testing.assert_allclose(Bn[k], A[k], rtol=tol, atol=1e-300)
    assert len(trr.snapshots) == len(trn.snapshots) and len(trr.starts) == len(trn.starts)
    for (l1, s1), (l2, s2) in zip(trr.snapshots + trr.starts, trn.snapshots + trn.starts):
        assert l1 == l2 and type(l2) is float
        assert s1.W.shape == s2.W.shape
        assert np.abs(s1.flat() - s2.flat()).max() <= tol * max(1.0, np.abs(s1.flat()).max())


@pytest.mark.parametrize("like", [None, CPU64], ids=["numpy", "torch"])
def test_stage3_batched_matches_algorithm1(stage2_nets, like):
    nets, ts = stage2_nets
    lam0, eta = [0.02, 0.02, 0.01], [0.1, 0.05, 0.1]
    ref = [
        alg.stage3(n, t, l, 3, steps=60, eta=e, record_every=7, grow=2.0)
        for n, t, l, e in zip(nets, ts, lam0, eta)
    ]
    new = gb.stage3_batched(
        nets, ts, lam0, 3, steps=60, eta=eta, record_every=7, grow=2.0, like=like
    )
    assert len(new) == 3
    for r, n in zip(ref, new):  # 420 steps per configuration
        assert_trajectories_close(r, n, 1e-10)
    # the inputs are not modified
    assert np.array_equal(nets[0].a, stage2_nets[0][0].a)


@pytest.mark.parametrize("like", [None, CPU64], ids=["numpy", "torch"])
def test_stage3_batched_keeps_nets_and_early_records_as_algorithm1(stage2_nets, like):
    # what chapter paper_b/stage3 asks for: log-spaced early records and the network at each
    nets, ts = stage2_nets
    ref = [
        alg.stage3(
            n, t, 0.02, 2, steps=40, eta=0.1, record_every=16, grow=2.0, keep_nets=True, early=True
        )
        for n, t in zip(nets, ts)
    ]
    new = gb.stage3_batched(
        nets,
        ts,
        0.02,
        2,
        steps=40,
        eta=0.1,
        record_every=16,
        grow=2.0,
        like=like,
        keep_nets=True,
        early=True,
    )
    for r, n in zip(ref, new):
        assert_trajectories_close(r, n, 1e-10)
        steps = n[1].arrays()["step"]
        assert {1, 2, 3, 4, 5} <= set(steps.tolist())  # early: log-spaced below record_every
        assert len(r[1].nets) == len(n[1].nets) == len(steps)
        for a, b in zip(r[1].nets, n[1].nets):
            assert a.W.shape == b.W.shape
            assert np.abs(a.flat() - b.flat()).max() <= 1e-10 * max(1.0, np.abs(a.flat()).max())
    # without keep_nets nothing is kept
    plain = gb.stage3_batched(nets[:1], ts[0], 0.02, 1, steps=10, eta=0.1, like=like)
    assert plain[0][1].nets == []


def test_stage3_batched_one_teacher_and_scalar_rates(stage2_nets):
    nets, ts = stage2_nets
    ref = [alg.stage3(n, ts[0], 0.02, 2, steps=50, eta=0.1, record_every=50) for n in nets]
    new = gb.stage3_batched(nets, ts[0], 0.02, 2, steps=50, eta=0.1, record_every=50)
    for r, n in zip(ref, new):
        assert_trajectories_close(r, n, 1e-10)


def test_stage3_batched_default_records_as_algorithm1(stage2_nets):
    """Without ``record_every`` the batched Stage 3 records where ``stage3`` records without
    it (it is ``stage3`` for ``B`` configurations, ``record_every`` included): an epoch of 60
    steps records at its first step, at the multiples of ``stage3``'s default spacing (50)
    and at its end, the same steps and values as ``stage3`` (to rounding)."""
    nets, ts = stage2_nets
    ref = alg.stage3(nets[0], ts[0], 0.02, 1, steps=60, eta=0.1)
    [new] = gb.stage3_batched(nets[:1], ts[0], 0.02, 1, steps=60, eta=0.1)
    assert_trajectories_close(ref, new, 1e-10)
    assert new[1].arrays()["step"].tolist() == ref[1].arrays()["step"].tolist() == [0, 50, 60]


@pytest.mark.parametrize("like", [None, CPU64], ids=["numpy", "torch"])
def test_stage3_batched_records_every_gradient_block_as_algorithm1(nets, teachers, like):
    """The recorded squared gradient norm is ``||grad L_lambda||^2`` over all four blocks
    ``(a, W, alpha, beta)``, beta's included, each configuration's own. The networks after
    Stages 1-2 are even functions (``grad_beta = 0`` all along), so here Stage 3 starts from
    networks with a linear part (``beta != 0``, ``sum_i a_i w_i != 0``) of three widths in one
    batch: at step 0 the records equal, by an independent route (the NumPy code before the
    array-API rewrite, ``ref_grad`` and ``ref_loss``), ``||grad L_lambda||^2`` (beta's block at
    least 5% of it), ``L`` and ``L + lambda/2 (||a||^2 + ||W||_F^2)``; and the whole run equals
    ``algorithm1.stage3`` network by network."""
    lam0, eta = [0.02, 0.05, 0.1], [0.01, 0.005, 0.01]
    new = gb.stage3_batched(nets, teachers, lam0, 2, steps=4, eta=eta, record_every=2, like=like)
    for net, t, lam, e, got in zip(nets, teachers, lam0, eta, new, strict=True):
        g = ref_grad(net, t, lam)
        gn2 = g.a @ g.a + np.sum(g.W**2) + g.alpha**2 + g.beta @ g.beta
        assert g.beta @ g.beta >= 0.05 * gn2
        A = got[1].arrays()
        assert A["grad_norm2"][0] == pytest.approx(gn2, rel=1e-10)
        L = ref_loss(net, t)
        assert A["loss"][0] == pytest.approx(L, rel=1e-10)
        reg = L + 0.5 * lam * (net.a @ net.a + np.sum(net.W**2))
        assert A["reg_loss"][0] == pytest.approx(reg, rel=1e-10)
        ref = alg.stage3(net, t, lam, 2, steps=4, eta=e, record_every=2)
        assert_trajectories_close(ref, got, 1e-10)
        assert A["step"].tolist() == [0, 2, 4, 4, 6, 8]


def test_stage3_batched_bad_arguments(stage2_nets):
    nets, ts = stage2_nets
    with pytest.raises(ValueError, match="eta"):
        gb.stage3_batched(nets, ts, 0.02, 1, steps=5, eta=[0.1, -0.1, 0.1])
    with pytest.raises(ValueError, match="record_every"):
        gb.stage3_batched(nets, ts, 0.02, 1, steps=5, eta=0.1, record_every=0)
    with pytest.raises(ValueError, match="backend"):
        gb.array_like("jax")
    assert gb.stage3_batched([], ts, 0.02, 1, steps=5, eta=0.1) == []


# --- stage3_batched: arguments, bounds, mixed widths and dimensions ------------------------------


@pytest.fixture(scope="module")
def mixed_nets():
    """Two tiny configurations after Stage 1, of different widths (6, 4) and input dimensions
    (6, 4), each with its own teacher of its dimension."""
    ts = [tmod.prototype(6, 0), tmod.random_teacher(4, 2, 3, 1)]
    inits = [alg.symmetric_init(6, 6, 0), alg.symmetric_init(4, 4, 1)]
    nets = [alg.stage1(n, t) for n, t in zip(inits, ts)]
    return nets, ts


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"epochs": -1}, "epochs must be a non-negative integer, got -1"),
        ({"epochs": True}, "epochs must be a non-negative integer, got True"),
        ({"epochs": 2.0}, "epochs must be a non-negative integer, got 2.0"),
        ({"steps": -1}, "steps must be a non-negative integer, got -1"),
        ({"steps": False}, "steps must be a non-negative integer, got False"),
        ({"steps": 3.0}, "steps must be a non-negative integer, got 3.0"),
        ({"record_every": 0}, "record_every must be a positive integer, got 0"),
        ({"record_every": -2}, "record_every must be a positive integer, got -2"),
        ({"record_every": True}, "record_every must be a positive integer, got True"),
        ({"record_every": 1.5}, "record_every must be a positive integer, got 1.5"),
        ({"lam0": [0.02, -0.01]}, "lam0 must be positive and finite, got [0.02, -0.01]"),
        ({"lam0": math.inf}, "lam0 must be positive and finite, got inf"),
        ({"eta": [0.1, 0.0]}, "eta must be positive and finite, got [0.1, 0.0]"),
        ({"eta": math.nan}, "eta must be positive and finite, got nan"),
    ],
)
def test_stage3_batched_rejects_bad_arguments_by_name(mixed_nets, kwargs, message):
    """The documented domain (``epochs`` and ``steps`` non-negative integers, ``record_every``
    a positive integer, ``bool`` not an integer here; ``lam0`` and ``eta`` positive and finite,
    per configuration): a value outside it raises a ``ValueError`` whose whole message names
    the parameter, the bound it breaks and the value given."""
    nets, ts = mixed_nets
    args = {"lam0": 0.02, "epochs": 1, "steps": 2, "eta": 0.1, "record_every": 1} | kwargs
    with pytest.raises(ValueError, match=rf"^{re.escape(message)}$"):
        gb.stage3_batched(nets, ts, args.pop("lam0"), args.pop("epochs"), **args)


@pytest.mark.parametrize("n_teachers", [1, 3])
def test_stage3_batched_rejects_a_teacher_list_of_the_wrong_length(mixed_nets, n_teachers):
    """A list of teachers is one per network: a list of another length (one teacher in a
    list included, which is not "one teacher for all") raises, saying how many of each."""
    nets, ts = mixed_nets
    teachers = [ts[0], ts[1], ts[0]][:n_teachers]
    message = f"{n_teachers} teachers for 2 configurations"
    with pytest.raises(ValueError, match=rf"^{re.escape(message)}$"):
        gb.stage3_batched(nets, teachers, 0.02, 1, steps=2, eta=0.1)


def test_stage3_batched_bounds_of_the_domain_as_algorithm1(mixed_nets):
    """The edges of the domain are allowed and do what ``algorithm1.stage3`` does network by
    network: ``epochs=0`` returns copies of the input networks (equal to them, sharing no
    memory) and an empty trajectory; ``steps=0`` leaves every network where it is and records
    only step 0 of each epoch, at ``lambda_k = lam0 / 2^k``; ``record_every=1`` records every
    step (0 to ``steps``)."""
    nets, ts = mixed_nets
    out = gb.stage3_batched(nets, ts, [0.02, 0.01], 0, steps=3, eta=0.1)
    for net, t, (new, tr) in zip(nets, ts, out, strict=True):
        ref = alg.stage3(net, t, 0.02, 0, steps=3, eta=0.1)
        assert_trajectories_close(ref, (new, tr), 0.0)
        assert new is not net and new.W.shape == net.W.shape
        assert np.array_equal(new.flat(), net.flat())
        assert not any(np.shares_memory(x, y) for x, y in [(new.a, net.a), (new.W, net.W)])
        assert not np.shares_memory(new.beta, net.beta)
        assert all(len(v) == 0 for v in tr.arrays().values())
        assert tr.nets == tr.snapshots == tr.starts == []
    out = gb.stage3_batched(nets, ts, [0.02, 0.01], 2, steps=0, eta=0.1)
    for net, t, lam0, (new, tr) in zip(nets, ts, [0.02, 0.01], out, strict=True):
        assert_trajectories_close(alg.stage3(net, t, lam0, 2, steps=0, eta=0.1), (new, tr), 1e-12)
        assert np.array_equal(new.flat(), net.flat())
        A = tr.arrays()
        assert A["epoch"].tolist() == [0, 1] and A["step"].tolist() == [0, 0]
        assert A["lam"].tolist() == [lam0, lam0 / 2]
    out = gb.stage3_batched(nets, ts, 0.02, 1, steps=3, eta=0.1, record_every=1)
    for net, t, new in zip(nets, ts, out, strict=True):
        ref = alg.stage3(net, t, 0.02, 1, steps=3, eta=0.1, record_every=1)
        assert_trajectories_close(ref, new, 1e-10)
        assert new[1].arrays()["step"].tolist() == [0, 1, 2, 3]


def test_stage3_batched_mixed_widths_and_dimensions_as_algorithm1(mixed_nets):
    """Networks of different widths and input dimensions in one batch (padded inside), each
    with its own teacher, and networks of different widths sharing one teacher given once:
    every network and trajectory is ``algorithm1.stage3`` run on that network alone, with its
    own width and dimension."""
    nets, ts = mixed_nets
    shared = [alg.symmetric_init(4, 4, 2), alg.symmetric_init(4, 8, 3)]
    for batch, teachers in ((nets, ts), (shared, ts[1])):
        tlist = teachers if isinstance(teachers, list) else [teachers] * len(batch)
        new = gb.stage3_batched(batch, teachers, 0.02, 2, steps=3, eta=0.1, record_every=2)
        for net, t, got in zip(batch, tlist, new, strict=True):
            ref = alg.stage3(net, t, 0.02, 2, steps=3, eta=0.1, record_every=2)
            assert got[0].W.shape == net.W.shape and got[0].beta.shape == net.beta.shape
            assert_trajectories_close(ref, got, 1e-10)


def test_stage3_batched_teacher_of_lower_dimension_is_embedded(mixed_nets):
    """A teacher on ``R^4`` for networks on ``R^6`` is the teacher padded with zero input
    coordinates (its neurons lie in the first four coordinates of ``R^6``; the docstring of
    ``NetBatch``: padding changes no number): the batched run equals ``algorithm1.stage3``
    against that explicitly embedded ``R^6`` teacher."""
    nets, ts = mixed_nets
    t4 = ts[1]
    t6 = tmod.Teacher(t4.a, np.hstack([t4.W, np.zeros((t4.m, 2))]))
    batch = [nets[0], alg.symmetric_init(6, 4, 5)]
    new = gb.stage3_batched(batch, t4, 0.02, 1, steps=3, eta=0.1, record_every=2)
    for net, got in zip(batch, new, strict=True):
        ref = alg.stage3(net, t6, 0.02, 1, steps=3, eta=0.1, record_every=2)
        assert got[0].W.shape == net.W.shape
        assert_trajectories_close(ref, got, 1e-10)


def test_stage1_batched_matches_algorithm1():
    ts = [tmod.prototype(6, 0), tmod.random_teacher(6, 2, 3, 1)]
    inits = [alg.symmetric_init(6, 10, 0), alg.symmetric_init(6, 8, 1)]
    for like in (None, CPU64):
        new = gb.stage1_batched(inits, ts, like=like)
        for n0, t, n1 in zip(inits, ts, new):
            r = alg.stage1(n0, t)
            assert_close_in_max_norm(n1.flat(), r.flat())


@pytest.mark.parametrize("n_teachers", [1, 3])
def test_stage1_batched_rejects_a_teacher_list_of_the_wrong_length(n_teachers):
    """As in Stage 3: a list of teachers is one per network, and a list of another length
    raises, saying how many of each."""
    ts = [tmod.prototype(6, 0), tmod.random_teacher(6, 2, 3, 1)]
    inits = [alg.symmetric_init(6, 6, 0), alg.symmetric_init(6, 4, 1)]
    teachers = [ts[0], ts[1], ts[0]][:n_teachers]
    message = f"{n_teachers} teachers for 2 configurations"
    with pytest.raises(ValueError, match=rf"^{re.escape(message)}$"):
        gb.stage1_batched(inits, teachers)


def test_stage1_batched_teacher_of_lower_dimension_is_embedded():
    """As in Stage 3: a teacher on ``R^4`` for networks on ``R^6`` is that teacher padded with
    zero input coordinates; the batched step equals ``algorithm1.stage1`` against the
    explicitly embedded ``R^6`` teacher."""
    t4 = tmod.random_teacher(4, 2, 3, 1)
    t6 = tmod.Teacher(t4.a, np.hstack([t4.W, np.zeros((t4.m, 2))]))
    inits = [alg.symmetric_init(6, 6, 0), alg.symmetric_init(6, 4, 1)]
    for n0, n1 in zip(inits, gb.stage1_batched(inits, t4), strict=True):
        r = alg.stage1(n0, t6)
        assert n1.W.shape == n0.W.shape
        assert_close_in_max_norm(n1.flat(), r.flat())


def test_stage3_loop_runs_on_meta_without_host_reads(stage2_nets):
    """Stage 3's loop (gradient, records, updates, snapshots) never reads the device."""
    from twolayer.core.device import DeviceGuard

    nets, ts = stage2_nets
    meta = torch.empty(0, dtype=F64, device="meta")
    b = pop.NetBatch.from_nets(nets, meta)
    ta = pop.teacher_arrays(ts, like=meta)
    eta = torch.full((3,), 0.1, dtype=F64, device="meta")
    lams = [torch.full((3,), 0.02 / 2**k, dtype=F64, device="meta") for k in range(2)]
    with DeviceGuard("meta"):
        meta_rec, vals, starts, ends, kept = gb._run_epochs(
            b.arrays(), ta, eta, lams, [5, 10], record_every=4
        )
    assert [s for _, s in meta_rec] == [0, 4, 5, 5, 9, 13, 15]  # ends recorded too
    assert len(vals) == 7 and vals[0].shape == (3, 3) and len(starts) == len(ends) == 2
    assert kept == []
    # what the chapter runs: early records and the networks kept, still without a host read
    with DeviceGuard("meta"):
        meta_rec, vals, _, _, kept = gb._run_epochs(
            b.arrays(), ta, eta, lams, [5, 10], record_every=4, early=True, keep_nets=True
        )
    assert [s for _, s in meta_rec] == [0, 1, 2, 3, 4, 5, 5, 6, 7, 8, 9, 13, 15]
    assert len(kept) == len(vals) == 13 and kept[0][1].device.type == "meta"


def test_stage1_batched_mixed_dimensions_and_one_shared_teacher():
    """Initializations of different widths and input dimensions in one batch, and one teacher
    shared by every initialization: each network is the one step of Algorithm 1 taken alone."""
    ts = [tmod.prototype(6, 0), tmod.random_teacher(4, 2, 3, 1)]
    inits = [alg.symmetric_init(6, 10, 0), alg.symmetric_init(4, 8, 1)]
    shared = [alg.symmetric_init(6, 10, 2), alg.symmetric_init(6, 4, 3)]
    for like in (None, CPU64):
        for nets, teachers in ((inits, ts), (shared, ts[0])):
            new = gb.stage1_batched(nets, teachers, 0.5, 0.1, like=like)
            tlist = teachers if isinstance(teachers, list) else [teachers] * len(nets)
            for n0, t, n1 in zip(nets, tlist, new, strict=True):
                r = alg.stage1(n0, t, 0.5, 0.1)
                assert n1.W.shape == r.W.shape
                assert_close_in_max_norm(n1.flat(), r.flat())
