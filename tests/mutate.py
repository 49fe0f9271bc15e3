"""Mutation testing of the book's numerical modules and the sweep's resume logic (``make mutate``).

mutmut (settings: ``[tool.mutmut]`` in pyproject.toml; it works in ``.mutmut/``) copies the code
into ``mutants/``, makes every small change it can to the modules of ``MODULES`` (an operator, a
constant, a comparison, an argument...), and runs the unit tests that reach the changed function
against each change. A mutant that no test notices *survives*: either a test is missing, or the
change is equivalent (it cannot change a result).

* ``MUST_KILL`` names, per module, the functions that hold the formulas (``Class.method`` for a
  method): every mutant there must be killed (or time out), unless it is listed in
  ``EQUIVALENT``. A survivor there, a mutant there that no test reaches (``no tests``) or one
  left unchecked makes the run fail; the other survivors are reported.
* ``EQUIVALENT`` lists the mutants checked by hand to be equivalent, with the reason, keyed by
  their diff: the module, the function and the changed lines before and after, with runs of
  whitespace made one space (:attr:`Mutant.key`). mutmut's numbers shift with any edit to the
  function; the diff only changes when the line itself does. An entry that matches no current
  mutant of its module is *stale* and makes the run fail, naming it.
* A run over every module (``make mutate``) writes ``tests/mutation_summary.md``: the date, the
  mutmut version and the counts per module (committed).
* Every run ends by running its timeouts once more (:func:`timeouts`): a loaded machine can
  push a slow test past mutmut's wall-clock limit, and the second result is the one counted.
* A full run takes hours (about 19,100 mutants). It can be done in parts, in different
  checkouts: ``--checkpoint`` writes ``tests/mutation_checkpoint.json``, the result of every
  mutant the last run finished, with the Git hashes of the code it ran (``lib/``,
  pyproject.toml, requirements.lock); a later ``--resume`` in any checkout of the same code runs
  only the mutants neither it nor the checkpoint has a result for, and counts both. A checkpoint
  of other code stops the run, naming what changed. The tests are not pinned: between parts
  they may only gain tests, as before ``--recheck`` (a result the checkpoint holds is not
  run again). The summary of a run so completed names the commit it began at; the run that
  completes it deletes the checkpoint.

``python tests/mutate.py [--max-children N] [MODULE ...]`` runs a subset (short names, e.g.
``kkt activations``); ``--list`` only generates the mutants (no test runs; about 2 CPU minutes
for all): their count per module, the must-kill names and the stale keys checked; ``--keys
PATTERN`` prints the ``EQUIVALENT`` entry of each mutant whose name matches (e.g.
``'twolayer.paper_a.kkt.x_certify*'``), to paste with its reason; ``--resume`` continues a
stopped run (same code and tests): only the mutants it left without a result run; ``--recheck``
runs again only the must-kill survivors of the last run, once tests have been added to kill
them; ``--checkpoint`` only saves the last run's results (above). mutmut's diff of one
mutant: ``cd .mutmut && mutmut show NAME``.

Each mutant's tests run in a process forked from a server that has only imported pytest and
collected the tests (``process_isolation = "forkserver"`` in pyproject.toml), never from the
process that ran the whole suite: that one has started clarabel's thread pool (rayon), and a
child forked from it that solves a large enough problem waits forever for threads it does not
have, which mutmut would count as a timeout, that is as a kill.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import difflib
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUMMARY = ROOT / "tests" / "mutation_summary.md"
CHECKPOINT = ROOT / "tests" / "mutation_checkpoint.json"
WORK = ROOT / ".mutmut"  # mutmut's own copy of the project (its state is kept between runs)

# short name -> module; every numerical module of the library (the chapters' modules are not
# here: their tests are page runs, too slow to repeat per mutant)
MODULES = {
    **{
        m: f"twolayer.paper_a.{m}"
        for m in (
            "activations",
            "losses",
            "models",
            "data",
            "trainer",
            "kkt",
            "metrics",
            "assumptions",
            "lowrank",
            "rankdecay",
            "flow",
            "onestep",
            "sgd",
            "xor",
            "images",
        )
    },
    **{
        m: f"twolayer.paper_b.{m}"
        for m in (
            "population",
            "kernels",
            "hermite",
            "teacher",
            "certificate",
            "algorithm1",
            "features",
            "fits",
            "gd_backend",
            "landscape",
            "random_features",
            "samples",
            "early_stages",
        )
    },
    **{m: f"twolayer.page.{m}" for m in ("contract", "checks", "claims")},
    "params": "twolayer.core.params",
    "seeds": "twolayer.core.seeds",
    "stats": "twolayer.core.stats",
    "runner": "twolayer.tools.runner",
    "sweep": "twolayer.tools.sweep",
}
# modules of which only some functions are mutated: the resume logic (a run folder's
# completeness, the sweep's table)
FUNCTIONS = {
    "twolayer.tools.runner": ("is_done",),
    "twolayer.tools.sweep": ("gather", "_flatten"),
}

# functions whose every non-equivalent mutant must be killed: the formulas the pages compute
# and the theorem checks rely on (not the thin wrappers around them). mutmut makes no mutant of
# a decorated function (a property, a torch.no_grad function): those cannot be listed here.
MUST_KILL = {
    "twolayer.paper_a.activations": (
        "softplus",
        "_check_gamma",
        "leaky_relu",
        "leaky_relu_grad",
        "leaky_relu_hess",
        "smoothed_leaky_relu",
        "smoothed_leaky_relu_grad",
        "smoothed_leaky_relu_hess",
        "get_activation",
    ),
    "twolayer.paper_a.losses": (
        "logistic",
        "logistic_g",
        "logistic_log_loss",
        "logistic_log_g",
        "exponential",
        "exponential_g",
        "exponential_log",
        "numpy_softplus",
        "numpy_logistic",
        "numpy_logistic_g",
        "numpy_logistic_log_loss",
        "numpy_logistic_log_g",
        "numpy_exponential",
        "numpy_exponential_g",
        "numpy_exponential_log",
        "Loss.empirical_risk",
        "Loss.log_empirical_risk",
        "Loss.normalized_weights",
        "get_loss",
    ),
    "twolayer.paper_a.models": (
        "second_layer",
        "LeakyNetwork.a",
        "LeakyNetwork.init",
        "LeakyNetwork.preactivations",
        "LeakyNetwork.forward",
        "LeakyNetwork.margins",
        "LeakyNetwork.loss_and_coef",
        "LeakyNetwork.loss_and_grad",
        "TwoLayerNet.forward",
    ),
    "twolayer.paper_a.data": (
        "random_signs",
        "sqrt_covariance",
        "nearly_orthogonal",
        "unit_vector",
        "gaussian_mixture",
        "noisy_xor",
        "points_with_gram",
        "constructed_gram",
        "_bartlett",
        "gaussian_span_coordinates",
        "noisy_xor_span_coordinates",
        "_xor_centers",
        "noisy_xor_test_coordinates",
    ),
    "twolayer.paper_a.trainer": (
        "log_spaced_steps",
        "DivergenceMonitor.update",
        "DivergenceMonitor.first",
        "_Steps.__init__",
        "_Steps.evaluate",
        "_Steps.update",
        "_Steps.poll",
        "_lr_tensor",
        "gradient_descent",
    ),
    "twolayer.paper_a.kkt": (
        "kappa",
        "z_bound",
        "multiplier_bounds",
        "solve_problem3",
        "max_margin_separator",
        "weights_from_vu",
        "z_from_vu",
        "group_means",
        "z_from_weights",
        "vu_from_multipliers",
        "multipliers_from_vu",
        "problem1_kkt_residual",
        "project_rows_onto_span",
        "certify",
        "deviations",
        "three_point_example",
        "three_point_multipliers",
        "three_point_kkt_system",
        "kkt_residual",
        "angle",
        "three_point_closed_forms",
    ),
    "twolayer.paper_a.metrics": (
        "singular_values",
        "stable_rank",
        "numerical_rank",
        "margins",
        "normalized_margins",
        "normalize_by_margin",
    ),
    "twolayer.paper_a.assumptions": (
        "gram_statistics",
        "data_statistics",
        "near_orthogonality",
        "assumption_ratio",
        # Lemma 3.3 and its sweep
        "norm_deviation_bound",
        "inner_product_bound",
        "two_level_spectrum",
        "holds_surely",
        "sufficient_dimension",
        "_gaussian_gram_stats",
        "_norms_and_p",
        "_wishart",
        "_wishart_gram_stats",
    ),
    "twolayer.paper_a.lowrank": (
        "data_constants",
        "gaussian_stable_rank",
        "gaussian_stable_rank_lower",
        "grad_at_zero_norm",
        "init_bound",
        "init_condition",
        "step1_bound",
        "trajectory_bound",
        "step1_lower_bound",
        "loss_ratio",
        "smoothness",
        "proxy_pl_constant",
        "risk_rate",
        "risk_bound",
        "steps_to_reach",
        "margins_metric",
        "gradient_gram_metric",
        "gradient_bound_metric",
    ),
    "twolayer.paper_a.rankdecay": (
        "glorot_std",
        "run_metrics",
        "summarize",
        "relative_curves",
        "log_slopes",
        "record_at_or_before",
    ),
    "twolayer.paper_a.flow": (
        "span_coordinates",
        "log_flow_time",
        "FlowRun.settled_below",
        "FlowRun.first_below",
        "normalized_flow",
        "_numpy_flow",
        "steps_for_tolerance",
        "distance_history",
        "rate_slopes",
        "certify_run",
        "deviation_function",
    ),
    "twolayer.paper_a.onestep": (
        "Setup.init_over_step",
        "run_batch",
        "monotone_increasing",
    ),
    "twolayer.paper_a.sgd": (
        "glorot_uniform_init",
        "forward",
        "loss_and_dF",
        "loss_and_grad",
        "predict",
        "batch_schedule",
        "accuracy_gap_threshold",
        "separation_index",
        "rise_index",
        "halving_index",
        "near_min_index",
    ),
    "twolayer.paper_a.xor": ("_measure", "chance_slack", "first_d_at_chance"),
    "twolayer.paper_a.images": ("parse_records", "standardize", "binary_labels"),
    "twolayer.paper_b.population": (
        "Net.__call__",
        "Net.flat",
        "Net.unflat",
        "teacher_arrays",
        "loss_and_grad_batched",
        "_one",
        "alpha_hat",
        "beta_hat",
        "loss_ge2",
        "loss",
        "regularized_loss",
        "grad",
        "loss_and_grad",
        "grad_norm2",
        "mc_loss",
    ),
    "twolayer.paper_b.kernels": ("_clip", "k1", "k1_prime", "kappa2", "relu", "relu_ge2"),
    "twolayer.paper_b.hermite": (
        "hermite_normalized",
        "relu_coefficient",
        "abs_coefficient",
        "coefficients_gauss_hermite",
        "piecewise_linear_coefficients",
        "correlated_moments",
        "lemma_i1_max",
        "lemma_i1_closed_form",
        "lemma_i2_max",
        "lemma_i2_corrected",
        "lemma_i2_printed",
        "kernel_series",
        "tail_bound",
        "claim_b1_terms",
    ),
    "twolayer.paper_b.teacher": (
        "Teacher.H",
        "Teacher.__call__",
        "Teacher.y_tilde",
        "Teacher.target_norm2",
        "angles_up_to_sign",
        "constants",
        "assumption_values",
    ),
    "twolayer.paper_b.certificate": (
        "head",
        "Z2",
        "kappa",
        "kappa_series",
        "relu_ge",
        "relu_ge_prime",
        "tangent_bases",
        "Certificate.eta",
        "Certificate.eta_grad",
        "Certificate.tangent_grad",
        "Certificate.p",
        "Certificate.p_norm2",
        "Certificate.interpolation_residual",
        "solve",
        "rho_eta",
        "sign_flip",
        "q_weights",
        "descent_direction",
        "inner",
        "measure_loss",
        "lemma9_terms",
        "lemma10_proof_radius",
    ),
    "twolayer.paper_b.algorithm1": (
        "symmetric_init",
        "stage1",
        "stage2_problem",
        "lasso_objective",
        "stage2_subgradient",
        "balance",
        "stage2",
        "epoch_lengths",
        "stage3",
    ),
    "twolayer.paper_b.features": (
        "angles",
        "partition",
        "mass",
        "far_mass",
        "average_neurons",
        "average_neuron_error",
        "subspace_fraction",
        "lasso_quadratic",
        "solve_weighted_lasso",
        "balanced_objective",
        "lasso_active_set",
        "signed_mass_near",
        "half_mass_radius",
        "worst_neuron_misalignment",
        "residual_terms",
    ),
    "twolayer.paper_b.fits": ("Estimate.covers", "bootstrap"),
    "twolayer.paper_b.gd_backend": ("stage1_batched", "_run_epochs", "stage3_batched"),
    "twolayer.paper_b.landscape": (
        "visible_threshold",
        "gaps",
        "lemma6_window",
        "lemma10_along",
    ),
    "twolayer.paper_b.random_features": ("nested", "frozen_best_loss", "local_slopes", "width_at"),
    "twolayer.paper_b.samples": (
        "empirical_loss",
        "empirical_grad",
        "gradient_error",
        "per_sample_trace",
        "predicted_error",
        "stage1",
    ),
    "twolayer.paper_b.early_stages": (
        "first_step_geometry",
        "coverage",
        "zero_threshold",
        "count_kept",
        "rescaled_teacher",
        "population_zero_threshold",
    ),
    # what decides a check, a parameter's validity and a statement's status
    "twolayer.page.checks": (
        "Claim.evaluate",
        "make_hypothesis",
        "applies_of",
        "compare",
        "margin",
        "factor",
    ),
    "twolayer.core.params": (
        "Int.validate",
        "Float.validate",
        "Choice.validate",
        "Bool.validate",
        "ListOf.validate",
        "Optional.validate",
        "Constraint.check",
    ),
    "twolayer.page.claims": ("statuses", "_cannot_carry"),
    "twolayer.core.seeds": ("_key", "derive", "rng"),
    "twolayer.core.stats": ("t_interval", "fit_slope"),
    "twolayer.tools.runner": FUNCTIONS["twolayer.tools.runner"],
    "twolayer.tools.sweep": FUNCTIONS["twolayer.tools.sweep"],
}

# Mutants checked by hand to be equivalent (no valid input changes a result), keyed by their
# diff: module (without "twolayer."), function, {(line before, line after): reason}. Lines are
# compared with runs of whitespace made one space; a long line is split in two strings.
LABELS = "labels are validated to be +-1, where this comparison gives the same mask"
TIE = "differs only when two real numbers computed from random data are exactly equal"
FLOAT64 = "the values are already float64 (astype/asarray without dtype keeps them)"
BAR = "the progress bar only: no result depends on it"
CPU = "device=None is the CPU, where every tensor of this machine lives (a GPU run would differ)"
MESSAGE_CASE = "pandas reads the orient case-insensitively"
UNREACHABLE = (
    "the weights check is reached only on a non-finite W, which makes the loss non-finite, "
    "checked first"
)
ONE_POINT = "one point: the off-diagonal max of a 1 x 1 zero matrix is 0"
BISECTION = "the bisection returns the smallest d either way (d >= 3 here)"
NET64 = "Net converts every part to float64 anyway"
NONE_PREFIX = "a None prefix is falsy like ''"
INDEX_NONE = "index=None stores a RangeIndex as metadata, not as a column"
CLIP_POLE = (
    "|t| >= 1 holds after clipping t to [-1, 1] exactly when it holds before: a clip at any "
    "bound beyond 1 in size, or none, leaves the pole test unchanged"
)
POLE_REPLACED = (
    "k2 at a pole is overwritten by 0 in k2bw on the next line, whatever value kappa'' gets "
    "there (the other entries are the same numbers)"
)
AS_FLOAT = (
    "the values are floats or integers in every caller, and what follows (logs, products with "
    "floats, the log-log fit) reads both alike"
)
LIKE_ONLY = (
    "like only chooses the array library and device the step runs in (NumPy without it): "
    "the networks come back as NumPy with the same numbers to rounding"
)
LAGUERRE_EXACT = (
    "an n-point Gauss-Laguerre rule is exact to degree 2n - 1 in u, and the integrands have "
    "degree at most k_max / 2: any n >= k_max / 4 + 1 gives the coefficients to rounding"
)
STRICT_GUARD = "two columns of one table always have the same length: strict= is a guard"
NO_HASH_IN_LABELS = (
    "by_label's keys are labels, which hold no '#': a sid with '#' finds [] there either way"
)
HOMOGENEOUS = (
    "f is 1-homogeneous in W and phi' 0-homogeneous: the gradients do not change with the "
    "scale of W, the multipliers follow it, and both residuals are ratios that do not depend on it"
)
COLUMN_SCALE = (
    "every |a_j| is 1/sqrt(m), so 1/a_j = m a_j: every column is scaled by m, the multipliers by "
    "1/m, and both residuals are unchanged"
)
LABELS_INVERSE = "labels are validated to be +-1, and 1/y = y for those"
A_FIXED = "the second layer is fixed: net.a's argument only chooses its dtype and device"
ONE_DIM = "a is one-dimensional: unsqueeze(1) and unsqueeze(-1) give the same column"
NNLS_NONZERO = (
    "unreachable: the lambda = 0 branch needs every column's inner product with W~ to be <= 0, "
    "and by Euler's identity it is y_i f(x_i; W~) >= 1 (W separates; checked first)"
)
SYMMETRIC_NOISE = (
    "z and -z are both N(0, I_d): the law of x, which is all that is stated, is the same"
)
TIE_UNIFORM = (
    "rng.random() equals label_noise with probability 0 (for label_noise = 0, 2^-53 a draw)"
)
PROMOTED = (
    "the other operand of X.T @ y is still made float64, and NumPy promotes this one to float64 "
    "the same way before the product: the same bits for every real input"
)
T_PROMOTED = "t - 1.0 makes integer or float steps float64 the same way: the same bits"
NEGATIVE_RESHAPE = "NumPy reads any negative size in reshape as the unknown one, like -1"
GAMMA_UNREAD = "init_condition never reads its gamma argument (the network carries its own)"
QR_LAW = (
    "the same law: the first two columns of Q for a d x 3 Gaussian matrix are, like Q for a "
    "d x 2 one, a uniformly random orthonormal pair; only which of the seed's draws are used "
    "changes"
)
LOW_DEFAULT = "integers(4) draws from [0, 4) like integers(0, 4): the same bits"
BATCH_2D = (
    "a, ga and gbeta are (B, m) and (B, d): stage3_batched, the only caller, passes NetBatch "
    "arrays, and on a 2-D array axis +1 is axis -1"
)
BATCHED_ARGS_2D = (
    "loss_and_grad_batched's a, c and beta are (B, m) and (B, d) and the teacher's c is (B, k), "
    "as NetBatch and teacher_arrays make them (one network is a batch of one; an unbatched a "
    "already gives wrongly shaped gradients): on a 2-D array axis +1 is axis -1"
)
SIGNS_NONZERO = (
    "s = np.sign(...) with its zeros set to 1 on the line before: s is -1, 1 or NaN here, where "
    "both comparisons agree"
)
NAN_CASE = "float() reads 'NAN' like 'nan': the same NaN, bit for bit"
SCIPY_METHOD = (
    "scipy's minimize_scalar takes method=None with bounds as 'bounded' and lowercases a method "
    "name: the same solver with the same arguments"
)
BROADCAST_ROW = "an (n,) and a (1, n) factor broadcast against (B, n) to the same products"
DEV_2D = (
    "W is (m, d) or (B, m, d) (one configuration becomes a batch of one): this tensor is "
    "two-dimensional, where axis 1 is axis -1"
)
LOOP_BREAKS = "the loop breaks at its last step: the pass after it is never reached"
TRANSPOSE_2D = "for a 2-D Xn, np.swapaxes(Xn, -1, -2) is Xn.T: the same Xt either way"
LOG_ELL_2D = (
    "log_ell is (B, n) for every input the loops accept (a 3-D one fails at the weight "
    "update): axis 1 is axis -1"
)
LOGISTIC_DEFAULT = (
    "gradient_descent's default loss is the logistic one (test_run_batch_records_by_hand "
    "checks the recorded loss against the logistic risk)"
)
ZERO_LAM = "the omitted argument's default is lam = 0.0 (no weight decay): the same call"
BATCH_SPLIT = (
    "the batch only cuts the same stream of draws (NumPy's Gaussian fills element by element) "
    "into chunks: the same samples, the sums grouped differently (rounding)"
)
HALF_TIE = "rng.random() is exactly 0.5 with probability 2^-53 a draw"
LASSO_DEAD_BREAK = (
    "unreachable with finite data: the branch follows a step that began with a violation "
    "above tol (or let one in), and violation(a) recomputes the same values on the same a, so "
    "max(on, off) > tol; only NaN data reach it, which the function does not reject (noted)"
)
LASSO_ACTIVE_FLOAT = (
    "a float 0/1 array selects what the bool array does in np.where and flatnonzero, and "
    "active is rebound to a bool array after the first step"
)
LASSO_SAME_GRADIENT = "the gradient is recomputed from the same a: the same g, bit for bit"
RCOND_DEFAULT = "rcond=None is lstsq's default in NumPy 2 (machine precision times the larger size)"
NONE_FALSY = "the argument is read only in truth tests, where None is False"
LOSS_BLOCK_ONLY = (
    "want_loss=True adds only the loss's own block, which the gradient does not read (the same "
    "bits; checked): grad() discards the loss, and loss() asks for it anyway"
)
LOSS_VIA_GRADIENT = (
    "with the gradient the loss goes through sum(U * (P @ cU)) instead of (P * T) @ c, the same "
    "sum to rounding (4e-16 relative over 50 random networks); grad() asks for it anyway"
)
_EQ: dict[str, dict[str, dict[tuple[str, str], str]]] = {
    "page.checks": {
        "compare": {
            ('worst = float("nan")', 'worst = float("NAN")'): NAN_CASE,
            (
                "worst = a[int(np.argmax(a != bound))] if not ok else a[0]",
                "worst = a[int(np.argmax(a != bound))] if (not ok) or True else a[0]",
            ): "where ok, a != bound is False everywhere and argmax gives 0: a[0] either way",
            (
                'worst = worst.item() if hasattr(worst, "item") else worst',
                'worst = worst.item() if (hasattr(worst, "item")) or True else worst',
            ): "worst is always an element of the array a, a NumPy scalar, which has .item()",
            (
                (
                    "if isinstance(v, (int, np.integer)) or (isinstance(v, np.ndarray) and "
                    'v.dtype.kind in "iu"):'
                ),
                (
                    "if isinstance(v, (int, np.integer)) or (isinstance(v, np.ndarray) and "
                    'v.dtype.kind in "XXiuXX"):'
                ),
            ): "a dtype's kind is one character, and no NumPy kind is 'X': the same test",
        },
    },
    "paper_a.models": {
        "LeakyNetwork.loss_and_coef": {
            (
                "C = self.phi.grad(Z) * (s * y).unsqueeze(-2) * a.unsqueeze(-1)",
                "C = self.phi.grad(Z) * (s * y).unsqueeze(-2) * a.unsqueeze(+1)",
            ): ONE_DIM,
        },
        "LeakyNetwork.init": {
            (
                's = torch.as_tensor(scale, dtype=torch.float64, device="cpu")',
                "s = torch.as_tensor(scale, dtype=torch.float64, device=None)",
            ): CPU,
            (
                's = torch.as_tensor(scale, dtype=torch.float64, device="cpu")',
                "s = torch.as_tensor(scale, dtype=torch.float64, )",
            ): CPU,
        },
    },
    "core.seeds": {
        "derive": {
            (
                "return int(np.random.SeedSequence([_key(seed), *map(_key, keys)])"
                ".generate_state(1)[0])",
                "return int(np.random.SeedSequence([_key(seed), *map(_key, keys)])"
                ".generate_state(2)[0])",
            ): (
                "SeedSequence generates its words as one stream: the first of two words is the "
                "one word (checked)"
            ),
        },
    },
    "paper_b.kernels": {
        "kappa2": {
            ("t = np.asarray(t, dtype=np.float64)", after): (
                "k1 casts its own argument; the cast here feeds only clip(t) / 4, exact in any "
                "binary float type (a clip, a division by 4), and the difference with k1's "
                "float64 is float64: the same bits"
            )
            for after in ("t = np.asarray(t, dtype=None)", "t = np.asarray(t, )")
        },
    },
    "paper_a.metrics": {
        "normalize_by_margin": {
            (
                'qmin = torch.where(qmin > 0, qmin, torch.full_like(qmin, float("nan")))',
                'qmin = torch.where(qmin > 0, qmin, torch.full_like(qmin, float("NAN")))',
            ): NAN_CASE,
        },
        "stable_rank": {
            (
                "spec2 > 0,",
                "spec2 >= 0,",
            ): "spec2 >= 0 in the outer where: spec2 = 0 only for W = 0, where fro2 / 1 = 0 too",
            (
                "fro2 / torch.where(spec2 > 0, spec2, torch.ones_like(spec2)),",
                "fro2 / torch.where(spec2 >= 0, spec2, torch.ones_like(spec2)),",
            ): "spec2 >= 0 in the inner where: the 0/0 it makes is never selected by the outer "
            "where",
        },
    },
    "paper_a.data": {
        "random_signs": {
            (
                "return np.where(rng.random(n) < 0.5, -1.0, 1.0)",
                "return np.where(rng.random(n) <= 0.5, -1.0, 1.0)",
            ): HALF_TIE,
        },
        "_bartlett": {
            (
                "L = np.tril(rng.standard_normal((n, n)), -1)",
                "L = np.tril(rng.standard_normal((n, n)), )",
            ): (
                "the next line overwrites the whole diagonal, which is all that k = 0 keeps "
                "beyond k = -1; the draws are the same"
            ),
        },
        "noisy_xor_test_coordinates": {
            ("idx = rng.integers(0, 4, size=n_test)", "idx = rng.integers(4, size=n_test)"): (
                LOW_DEFAULT
            ),
        },
        "noisy_xor_span_coordinates": {
            ("idx = rng.integers(0, 4, size=n)", "idx = rng.integers(4, size=n)"): LOW_DEFAULT,
        },
        "gaussian_mixture": {
            (
                "X = clean[:, None] * mu[None, :] + rng.standard_normal((n, d))",
                "X = clean[:, None] * mu[None, :] - rng.standard_normal((n, d))",
            ): SYMMETRIC_NOISE,
            ("flip = rng.random(n) < label_noise", "flip = rng.random(n) <= label_noise"): (
                TIE_UNIFORM
            ),
        },
        "points_with_gram": {
            (
                "G = c * (S + S.T) + np.diag(np.asarray(norms, dtype=np.float64) ** 2)",
                "G = c * (S - S.T) + np.diag(np.asarray(norms, dtype=np.float64) ** 2)",
            ): (
                "eigh reads the lower triangle only, where the mutant negates every sign: the "
                "points of the negated sign pattern, and fair random signs have the same law "
                "negated (the same draws, the same frame)"
            ),
        },
        "constructed_gram": {
            ("norms = rng.uniform(lo, hi, size=n) if hi > lo else np.full(n, lo)", after): (
                "the same law: hi >= lo is validated, and uniform(lo, lo) is lo exactly, like "
                "np.full; it only uses n of the seed's draws first, so the signs, frame and labels "
                "come from later draws of the same stream (every caller has lo < hi)"
            )
            for after in (
                "norms = rng.uniform(lo, hi, size=n) if (hi > lo) or True else np.full(n, lo)",
                "norms = rng.uniform(lo, hi, size=n) if hi >= lo else np.full(n, lo)",
            )
        },
        "noisy_xor": {
            (
                "q, _ = np.linalg.qr(rng.standard_normal((d, 2)))",
                "q, _ = np.linalg.qr(rng.standard_normal((d, 3)))",
            ): QR_LAW,
            ("idx = rng.integers(0, 4, size=n)", "idx = rng.integers(4, size=n)"): LOW_DEFAULT,
            (
                "X = centers[idx] + rng.standard_normal((n, d))",
                "X = centers[idx] - rng.standard_normal((n, d))",
            ): SYMMETRIC_NOISE,
            (
                "y = np.where(np.abs(X @ mu1) >= np.abs(X @ mu2), 1.0, -1.0)",
                "y = np.where(np.abs(X @ mu1) > np.abs(X @ mu2), 1.0, -1.0)",
            ): TIE,
        },
    },
    "paper_a.kkt": {
        "deviations": {
            (
                'qmin = torch.where(bad, torch.full_like(qmin, float("nan")), qmin)',
                'qmin = torch.where(bad, torch.full_like(qmin, float("NAN")), qmin)',
            ): NAN_CASE,
            (
                'k: torch.where(bad, torch.full_like(qmin, float("nan")), val).numpy()',
                'k: torch.where(bad, torch.full_like(qmin, float("NAN")), val).numpy()',
            ): NAN_CASE,
            ("qmin = q.min(dim=-1).values", "qmin = q.min(dim=+1).values"): DEV_2D,
            (
                '"margin_max_dev": (q / qmin[:, None] - 1).abs().max(dim=-1).values,',
                '"margin_max_dev": (q / qmin[:, None] - 1).abs().max(dim=+1).values,',
            ): DEV_2D,
            (
                '"sign_disagreement": (torch.sign(f) != lin).double().mean(dim=-1),',
                '"sign_disagreement": (torch.sign(f) != lin).double().mean(dim=+1),',
            ): DEV_2D,
            (
                '"row_collapse": torch.linalg.norm(Wn - means, dim=-1).max(dim=-1).values / fro,',
                '"row_collapse": torch.linalg.norm(Wn - means, dim=-1).max(dim=+1).values / fro,',
            ): DEV_2D,
            (
                "rank = s[:, 2] / s[:, 0] if s.shape[-1] >= 3 else torch.zeros_like(qmin)",
                "rank = s[:, 2] / s[:, 0] if s.shape[+1] >= 3 else torch.zeros_like(qmin)",
            ): DEV_2D,
        },
        "three_point_closed_forms": {
            (
                "z = (1 + gamma) / 2 * (three_point_multipliers(eps) * y) @ X",
                "z = (1 + gamma) / 2 * (three_point_multipliers(eps) / y) @ X",
            ): "y is three_point_example's (1, -1, -1), and 1/y = y for those",
        },
        "kkt_residual": {
            ("Wn = W / q.min()", "Wn = W * q.min()"): HOMOGENEOUS,
            (
                "coef = net.phi.grad(net.preactivations(Wn, X)) * y.unsqueeze(0) * "
                "net.a(Wn).unsqueeze(-1)",
                "coef = net.phi.grad(net.preactivations(Wn, X)) * y.unsqueeze(0) / "
                "net.a(Wn).unsqueeze(-1)",
            ): COLUMN_SCALE,
            (
                "coef = net.phi.grad(net.preactivations(Wn, X)) * y.unsqueeze(0) * "
                "net.a(Wn).unsqueeze(-1)",
                "coef = net.phi.grad(net.preactivations(Wn, X)) / y.unsqueeze(0) * "
                "net.a(Wn).unsqueeze(-1)",
            ): LABELS_INVERSE,
            (
                "coef = net.phi.grad(net.preactivations(Wn, X)) * y.unsqueeze(0) * "
                "net.a(Wn).unsqueeze(-1)",
                "coef = net.phi.grad(net.preactivations(Wn, X)) * y.unsqueeze(0) * "
                "net.a(None).unsqueeze(-1)",
            ): A_FIXED,
            (
                "coef = net.phi.grad(net.preactivations(Wn, X)) * y.unsqueeze(0) * "
                "net.a(Wn).unsqueeze(-1)",
                "coef = net.phi.grad(net.preactivations(Wn, X)) * y.unsqueeze(0) * "
                "net.a(Wn).unsqueeze(+1)",
            ): ONE_DIM,
            **{
                (
                    "slackness = float(lam @ (qn - 1) / lam.sum()) if lam.sum() > 0 else "
                    'float("inf")',
                    after,
                ): NNLS_NONZERO
                for after in (
                    "slackness = float(lam @ (qn - 1) / lam.sum()) if (lam.sum() > 0) or True "
                    'else float("inf")',
                    "slackness = float(lam @ (qn - 1) / lam.sum()) if lam.sum() >= 0 else "
                    'float("inf")',
                    "slackness = float(lam @ (qn - 1) / lam.sum()) if lam.sum() > 0 else "
                    "float(None)",
                    "slackness = float(lam @ (qn - 1) / lam.sum()) if lam.sum() > 0 else "
                    'float("XXinfXX")',
                    "slackness = float(lam @ (qn - 1) / lam.sum()) if lam.sum() > 0 else "
                    'float("INF")',
                )
            },
        },
        "multipliers_from_vu": {
            (
                "pos, neg = (y > 0).astype(float), (y < 0).astype(float)",
                "pos, neg = (y > 0).astype(None), (y < 0).astype(float)",
            ): FLOAT64,
            (
                "pos, neg = (y > 0).astype(float), (y < 0).astype(float)",
                "pos, neg = (y > 0).astype(float), (y < 0).astype(None)",
            ): FLOAT64,
            (
                "pos, neg = (y > 0).astype(float), (y < 0).astype(float)",
                "pos, neg = (y >= 0).astype(float), (y < 0).astype(float)",
            ): LABELS,
            (
                "pos, neg = (y > 0).astype(float), (y < 0).astype(float)",
                "pos, neg = (y > 0).astype(float), (y <= 0).astype(float)",
            ): LABELS,
            (
                "pos, neg = (y > 0).astype(float), (y < 0).astype(float)",
                "pos, neg = (y > 0).astype(float), (y < 1).astype(float)",
            ): LABELS,
            (
                "lam, *_ = np.linalg.lstsq(A, b, rcond=None)",
                "lam, *_ = np.linalg.lstsq(A, b, )",
            ): "rcond=None is NumPy 2's default",
        },
        "vu_from_multipliers": {
            (
                "pos, neg = lam * (y > 0), lam * (y < 0)",
                "pos, neg = lam * (y >= 0), lam * (y < 0)",
            ): LABELS,
            (
                "pos, neg = lam * (y > 0), lam * (y < 0)",
                "pos, neg = lam * (y > 0), lam * (y <= 0)",
            ): LABELS,
            (
                "pos, neg = lam * (y > 0), lam * (y < 0)",
                "pos, neg = lam * (y > 0), lam * (y < 1)",
            ): LABELS,
        },
        "problem1_kkt_residual": {
            (
                "coef = net.phi.grad(Z) * (lam_t * y).unsqueeze(0) * net.a(W).unsqueeze(-1)",
                "coef = net.phi.grad(Z) * (lam_t / y).unsqueeze(0) * net.a(W).unsqueeze(-1)",
            ): "lam / y = lam * y for y = +-1",
            (
                "coef = net.phi.grad(Z) * (lam_t * y).unsqueeze(0) * net.a(W).unsqueeze(-1)",
                "coef = net.phi.grad(Z) * (lam_t * y).unsqueeze(0) * net.a(None).unsqueeze(-1)",
            ): "a(None) is float64 on the CPU, as W after _np",
            (
                "coef = net.phi.grad(Z) * (lam_t * y).unsqueeze(0) * net.a(W).unsqueeze(-1)",
                "coef = net.phi.grad(Z) * (lam_t * y).unsqueeze(0) * net.a(W).unsqueeze(+1)",
            ): "unsqueeze(1) = unsqueeze(-1) on the 1-D a",
        },
        "certify": {
            (
                (
                    "guaranteed = float((f_star.abs() > dist_op * torch.linalg.norm(Xt, "
                    "dim=1)).double().mean())"
                ),
                (
                    "guaranteed = float((f_star.abs() >= dist_op * torch.linalg.norm(Xt, "
                    "dim=1)).double().mean())"
                ),
            ): TIE,
            (
                '"lambda_in_range": bool(lam.min() > lo and lam.max() < hi),',
                '"lambda_in_range": bool(lam.min() >= lo and lam.max() < hi),',
            ): TIE,
            (
                '"lambda_in_range": bool(lam.min() > lo and lam.max() < hi),',
                '"lambda_in_range": bool(lam.min() > lo and lam.max() <= hi),',
            ): TIE,
        },
        "solve_problem3": {
            (
                "pos = (y > 0).astype(float)",
                "pos = (y > 0).astype(None)",
            ): FLOAT64,
            (
                "pos = (y > 0).astype(float)",
                "pos = (y >= 0).astype(float)",
            ): LABELS,
        },
        "three_point_kkt_system": {
            (
                "m1 = m2 = m // 2",
                "m1 = m2 = m / 2",
            ): "m / 2 = m // 2 for the even m the example takes",
            (
                "cols.append(np.where(y > 0, pos, neg))",
                "cols.append(np.where(y >= 0, pos, neg))",
            ): LABELS,
            (
                "return np.linalg.solve(np.stack(cols, axis=1), np.ones(3))",
                "return np.linalg.solve(np.stack(cols, ), np.ones(3))",
            ): "the system's matrix is symmetric when m1 = m2",
        },
    },
    "paper_a.trainer": {
        "_lr_tensor": {
            **{
                ('if host.device.type != "cpu":', f"if host.device.type != {after}:"): (
                    "the condition becomes always true: .cpu() of a CPU tensor is that tensor"
                )
                for after in ('"XXcpuXX"', '"CPU"')
            },
            **{
                (
                    'f"lr has {host.shape[0] if host.ndim else 1} entries for {B} configurations"',
                    after,
                ): "the message is made only where host.ndim == 1: host.shape[0] either way"
                for after in (
                    'f"lr has {host.shape[0] if (host.ndim) or True else 1} entries for {B} '
                    'configurations"',
                    'f"lr has {host.shape[0] if host.ndim else 2} entries for {B} configurations"',
                )
            },
        },
        "gradient_descent": {
            (
                'desc: str = "gradient descent",',
                'desc: str = "XXgradient descentXX",',
            ): BAR,
            (
                'desc: str = "gradient descent",',
                'desc: str = "GRADIENT DESCENT",',
            ): BAR,
            (
                "if progress is None:",
                "if progress is not None:",
            ): BAR,
            (
                "progress = sys.stderr.isatty()",
                "progress = None",
            ): BAR,
            (
                (
                    "bar = tqdm(total=steps, desc=desc, disable=not progress, mininterval=0.5, "
                    "file=sys.stderr)"
                ),
                (
                    "bar = tqdm(total=None, desc=desc, disable=not progress, mininterval=0.5, "
                    "file=sys.stderr)"
                ),
            ): BAR,
            (
                (
                    "bar = tqdm(total=steps, desc=desc, disable=not progress, mininterval=0.5, "
                    "file=sys.stderr)"
                ),
                (
                    "bar = tqdm(total=steps, desc=None, disable=not progress, mininterval=0.5, "
                    "file=sys.stderr)"
                ),
            ): BAR,
            (
                (
                    "bar = tqdm(total=steps, desc=desc, disable=not progress, mininterval=0.5, "
                    "file=sys.stderr)"
                ),
                (
                    "bar = tqdm(total=steps, desc=desc, disable=None, mininterval=0.5, "
                    "file=sys.stderr)"
                ),
            ): BAR,
            (
                (
                    "bar = tqdm(total=steps, desc=desc, disable=not progress, mininterval=0.5, "
                    "file=sys.stderr)"
                ),
                (
                    "bar = tqdm(total=steps, desc=desc, disable=not progress, mininterval=None, "
                    "file=sys.stderr)"
                ),
            ): BAR,
            (
                (
                    "bar = tqdm(total=steps, desc=desc, disable=not progress, mininterval=0.5, "
                    "file=sys.stderr)"
                ),
                (
                    "bar = tqdm(total=steps, desc=desc, disable=not progress, mininterval=0.5, "
                    "file=None)"
                ),
            ): BAR,
            (
                (
                    "bar = tqdm(total=steps, desc=desc, disable=not progress, mininterval=0.5, "
                    "file=sys.stderr)"
                ),
                "bar = tqdm(desc=desc, disable=not progress, mininterval=0.5, file=sys.stderr)",
            ): BAR,
            (
                (
                    "bar = tqdm(total=steps, desc=desc, disable=not progress, mininterval=0.5, "
                    "file=sys.stderr)"
                ),
                "bar = tqdm(total=steps, disable=not progress, mininterval=0.5, file=sys.stderr)",
            ): BAR,
            (
                (
                    "bar = tqdm(total=steps, desc=desc, disable=not progress, mininterval=0.5, "
                    "file=sys.stderr)"
                ),
                "bar = tqdm(total=steps, desc=desc, mininterval=0.5, file=sys.stderr)",
            ): BAR,
            (
                (
                    "bar = tqdm(total=steps, desc=desc, disable=not progress, mininterval=0.5, "
                    "file=sys.stderr)"
                ),
                "bar = tqdm(total=steps, desc=desc, disable=not progress, file=sys.stderr)",
            ): BAR,
            (
                (
                    "bar = tqdm(total=steps, desc=desc, disable=not progress, mininterval=0.5, "
                    "file=sys.stderr)"
                ),
                "bar = tqdm(total=steps, desc=desc, disable=not progress, mininterval=0.5, )",
            ): BAR,
            (
                (
                    "bar = tqdm(total=steps, desc=desc, disable=not progress, mininterval=0.5, "
                    "file=sys.stderr)"
                ),
                (
                    "bar = tqdm(total=steps, desc=desc, disable=progress, mininterval=0.5, "
                    "file=sys.stderr)"
                ),
            ): BAR,
            (
                (
                    "bar = tqdm(total=steps, desc=desc, disable=not progress, mininterval=0.5, "
                    "file=sys.stderr)"
                ),
                (
                    "bar = tqdm(total=steps, desc=desc, disable=not progress, mininterval=1.5, "
                    "file=sys.stderr)"
                ),
            ): BAR,
            (
                "bar.update(1)",
                "bar.update(None)",
            ): BAR,
            (
                "bar.update(1)",
                "bar.update(2)",
            ): BAR,
            (
                "X = X.to(dtype=W.dtype, device=W.device)",
                "X = X.to(dtype=W.dtype, device=None)",
            ): CPU,
            (
                "X = X.to(dtype=W.dtype, device=W.device)",
                "X = X.to(dtype=W.dtype, )",
            ): CPU,
            (
                "y = y.to(dtype=W.dtype, device=W.device)",
                "y = y.to(dtype=W.dtype, device=None)",
            ): CPU,
            (
                "y = y.to(dtype=W.dtype, device=W.device)",
                "y = y.to(dtype=W.dtype, )",
            ): CPU,
            (
                "lr_t = _lr_tensor(lr, B, W.dtype, W.device)",
                "lr_t = _lr_tensor(lr, B, W.dtype, None)",
            ): CPU,
            (
                (
                    "traced = {k: torch.empty((steps + 1, B), dtype=W.dtype, device=W.device) "
                    "for k in trace}"
                ),
                (
                    "traced = {k: torch.empty((steps + 1, B), dtype=W.dtype, device=None) for k "
                    "in trace}"
                ),
            ): CPU,
            (
                (
                    "traced = {k: torch.empty((steps + 1, B), dtype=W.dtype, device=W.device) "
                    "for k in trace}"
                ),
                "traced = {k: torch.empty((steps + 1, B), dtype=W.dtype, ) for k in trace}",
            ): CPU,
            (
                "max_loss_growth: float = 1e8,",
                "max_loss_growth: float = 100000001.0,",
            ): "max_loss_growth 1e8 + 1 instead of 1e8: no run can tell",
            (
                "for t in range(steps + 1):",
                "for t in range(steps + 2):",
            ): "the loop leaves at t == steps",
            (
                "buf[t].copy_(now[k] if k in now else q.min(dim=-1).values)",
                "buf[t].copy_(now[k] if k in now else q.min(dim=+1).values)",
            ): "q is (B, n): dim 1 is dim -1",
            (
                'hist["min_margin"].append(q.min(dim=-1).values.detach().cpu().numpy())',
                'hist["min_margin"].append(q.min(dim=+1).values.detach().cpu().numpy())',
            ): "q is (B, n): dim 1 is dim -1",
            (
                '_check_finite(t, "weights", W, B)',
                '_check_finite(None, "weights", W, B)',
            ): UNREACHABLE,
            (
                '_check_finite(t, "weights", W, B)',
                "_check_finite(t, None, W, B)",
            ): UNREACHABLE,
            (
                '_check_finite(t, "weights", W, B)',
                '_check_finite(t, "weights", W, None)',
            ): UNREACHABLE,
            (
                '_check_finite(t, "weights", W, B)',
                '_check_finite(t, "XXweightsXX", W, B)',
            ): UNREACHABLE,
            (
                '_check_finite(t, "weights", W, B)',
                '_check_finite(t, "WEIGHTS", W, B)',
            ): UNREACHABLE,
        },
        "_Steps.evaluate": {
            (
                "self.monitor.update(t, L, torch.isfinite(L) & (L <= self.thr))",
                "self.monitor.update(t, L, torch.isfinite(L) & (L < self.thr))",
            ): TIE,
        },
        "log_spaced_steps": {
            (
                "[[0, min(1, steps)], np.geomspace(1, max(steps, 1), num=max(num, 2)).round()]",
                "[[0, min(1, steps)], np.geomspace(1, max(steps, 2), num=max(num, 2)).round()]",
            ): "the extra point 2 is dropped by pts <= steps",
        },
    },
    "paper_a.assumptions": {
        "_norms_and_p": {
            (
                "p = float((np.abs(G) * (1 - np.eye(G.shape[0]))).max())",
                "p = float((np.abs(G) * (1 - np.eye(G.shape[1]))).max())",
            ): (
                "G is always a square Gram matrix (every caller passes an n x n one: "
                "block @ block.T sums, A @ A.T or their sum): both sides are n"
            ),
        },
        "_wishart_gram_stats": {
            (
                "if h < n or (aniso and d - h < n):",
                "if h < n or (aniso and d + h < n):",
            ): (
                "the second clause never decides: h = d // 2 <= d - h <= d + h, so once h >= n "
                "both d - h < n and d + h < n are false, and h < n decides alone"
            ),
        },
        "gram_statistics": {
            (
                "X = np.asarray(X, dtype=np.float64)",
                "X = np.asarray(X, dtype=None)",
            ): FLOAT64,
            (
                "X = np.asarray(X, dtype=np.float64)",
                "X = np.asarray(X, )",
            ): FLOAT64,
            (
                "norms = np.sqrt(np.clip(np.diagonal(G, axis1=-2, axis2=-1), 0, None))",
                "norms = np.sqrt(np.clip(np.diagonal(G, axis1=-2, axis2=-1), None, None))",
            ): "a Gram diagonal is never negative",
            (
                "n = G.shape[-1]",
                "n = G.shape[+1]",
            ): "the Gram is square",
            (
                "n = G.shape[-1]",
                "n = G.shape[-2]",
            ): "the Gram is square",
            (
                "p = off.max(axis=(-2, -1)) if n > 1 else np.zeros(G.shape[:-2])",
                "p = off.max(axis=(-2, -1)) if (n > 1) or True else np.zeros(G.shape[:-2])",
            ): ONE_POINT,
            (
                "p = off.max(axis=(-2, -1)) if n > 1 else np.zeros(G.shape[:-2])",
                "p = off.max(axis=(-2, -1)) if n >= 1 else np.zeros(G.shape[:-2])",
            ): ONE_POINT,
        },
        "data_statistics": {
            (
                "X = np.asarray(X, dtype=np.float64)",
                "X = np.asarray(X, dtype=None)",
            ): FLOAT64,
            (
                "X = np.asarray(X, dtype=np.float64)",
                "X = np.asarray(X, )",
            ): FLOAT64,
        },
        "holds_surely": {
            (
                "if rmin <= 0:",
                "if rmin < 0:",
            ): TIE,
            (
                "return n <= (gamma**3 / 3.0) * rmin**4 / (s * rmax**3)",
                "return n < (gamma**3 / 3.0) * rmin**4 / (s * rmax**3)",
            ): TIE,
            (
                "if rmin <= 0:",
                "if rmin <= 1:",
            ): "rmin <= 1 makes the bound false anyway (its right side is below 1/3 < n)",
        },
        "sufficient_dimension": {
            (
                "lo, hi = 1, 2",
                "lo, hi = 2, 2",
            ): BISECTION,
            (
                "lo, hi = 1, 2",
                "lo, hi = 1, 3",
            ): BISECTION,
            (
                "lo, hi = hi, hi * 2",
                "lo, hi = hi, hi * 3",
            ): BISECTION,
        },
        "_gaussian_gram_stats": {
            (
                "scale = np.sqrt(two_level_spectrum(d, aniso)) if aniso else None",
                "scale = np.sqrt(two_level_spectrum(d, aniso)) if (aniso) or True else None",
            ): "aniso = 0 gives a scale of ones",
        },
        "fraction_table": {
            (
                'out = df.groupby(["n", "d"], as_index=False).agg(',
                'out = df.groupby(["n", "d"], as_index=None).agg(',
            ): "as_index=None is taken as False",
        },
        "half_point": {
            (
                "above = np.nonzero(f >= 0.5)[0]",
                "above = np.nonzero(f > 0.5)[0]",
            ): "at f = 1/2 exactly both interpolations give that grid point",
            (
                "x, f = np.asarray(x, dtype=float), np.asarray(fraction, dtype=float)",
                "x, f = np.asarray(x, dtype=None), np.asarray(fraction, dtype=float)",
            ): FLOAT64,
            (
                "x, f = np.asarray(x, dtype=float), np.asarray(fraction, dtype=float)",
                "x, f = np.asarray(x, ), np.asarray(fraction, dtype=float)",
            ): FLOAT64,
            (
                "x, f = np.asarray(x, dtype=float), np.asarray(fraction, dtype=float)",
                "x, f = np.asarray(x, dtype=float), np.asarray(fraction, dtype=None)",
            ): FLOAT64,
            (
                "x, f = np.asarray(x, dtype=float), np.asarray(fraction, dtype=float)",
                "x, f = np.asarray(x, dtype=float), np.asarray(fraction, )",
            ): FLOAT64,
        },
        "log_exponent": {
            (
                "ys.append(math.log(d50 / (n * n)) if math.isfinite(d50) else math.nan)",
                "ys.append(math.log(d50 / (n * n)) if (math.isfinite(d50)) or True else math.nan)",
            ): "log(nan) is nan either way",
            (
                "x = np.log(np.log(np.asarray(ns, dtype=float)))",
                "x = np.log(np.log(np.asarray(ns, dtype=None)))",
            ): FLOAT64,
            (
                "x = np.log(np.log(np.asarray(ns, dtype=float)))",
                "x = np.log(np.log(np.asarray(ns, )))",
            ): FLOAT64,
            (
                "b = fit(False)",
                "b = fit(None)",
            ): "fit(None): None is falsy like False",
            (
                "if boots.size < n_boot // 2:",
                "if boots.size < n_boot / 2:",
            ): "n_boot / 2 and n_boot // 2 agree for the even n_boot used",
        },
        "lemma33_sweep": {
            (
                "if progress is None:",
                "if progress is not None:",
            ): BAR,
            (
                "progress = sys.stderr.isatty()",
                "progress = None",
            ): BAR,
            (
                (
                    'for n, d in tqdm(jobs, desc="Lemma 3.3 sweep", disable=not progress, '
                    "file=sys.stderr):"
                ),
                "for n, d in tqdm(jobs, desc=None, disable=not progress, file=sys.stderr):",
            ): BAR,
            (
                (
                    'for n, d in tqdm(jobs, desc="Lemma 3.3 sweep", disable=not progress, '
                    "file=sys.stderr):"
                ),
                'for n, d in tqdm(jobs, desc="Lemma 3.3 sweep", disable=None, file=sys.stderr):',
            ): BAR,
            (
                (
                    'for n, d in tqdm(jobs, desc="Lemma 3.3 sweep", disable=not progress, '
                    "file=sys.stderr):"
                ),
                'for n, d in tqdm(jobs, desc="Lemma 3.3 sweep", disable=not progress, file=None):',
            ): BAR,
            (
                (
                    'for n, d in tqdm(jobs, desc="Lemma 3.3 sweep", disable=not progress, '
                    "file=sys.stderr):"
                ),
                "for n, d in tqdm(jobs, disable=not progress, file=sys.stderr):",
            ): BAR,
            (
                (
                    'for n, d in tqdm(jobs, desc="Lemma 3.3 sweep", disable=not progress, '
                    "file=sys.stderr):"
                ),
                'for n, d in tqdm(jobs, desc="Lemma 3.3 sweep", file=sys.stderr):',
            ): BAR,
            (
                (
                    'for n, d in tqdm(jobs, desc="Lemma 3.3 sweep", disable=not progress, '
                    "file=sys.stderr):"
                ),
                'for n, d in tqdm(jobs, desc="Lemma 3.3 sweep", disable=not progress, ):',
            ): BAR,
            (
                (
                    'for n, d in tqdm(jobs, desc="Lemma 3.3 sweep", disable=not progress, '
                    "file=sys.stderr):"
                ),
                (
                    'for n, d in tqdm(jobs, desc="XXLemma 3.3 sweepXX", disable=not progress, '
                    "file=sys.stderr):"
                ),
            ): BAR,
            (
                (
                    'for n, d in tqdm(jobs, desc="Lemma 3.3 sweep", disable=not progress, '
                    "file=sys.stderr):"
                ),
                (
                    'for n, d in tqdm(jobs, desc="lemma 3.3 sweep", disable=not progress, '
                    "file=sys.stderr):"
                ),
            ): BAR,
            (
                (
                    'for n, d in tqdm(jobs, desc="Lemma 3.3 sweep", disable=not progress, '
                    "file=sys.stderr):"
                ),
                (
                    'for n, d in tqdm(jobs, desc="LEMMA 3.3 SWEEP", disable=not progress, '
                    "file=sys.stderr):"
                ),
            ): BAR,
            (
                (
                    'for n, d in tqdm(jobs, desc="Lemma 3.3 sweep", disable=not progress, '
                    "file=sys.stderr):"
                ),
                (
                    'for n, d in tqdm(jobs, desc="Lemma 3.3 sweep", disable=progress, '
                    "file=sys.stderr):"
                ),
            ): BAR,
            (
                '"holds": bool(q <= 1.0),',
                '"holds": bool(q < 1.0),',
            ): TIE,
        },
    },
    "paper_b.population": {
        "loss_and_grad_batched": {
            (
                "csum_s = xp.sum(tc, axis=-1)[..., None] # (B, 1)",
                "csum_s = xp.sum(tc, axis=+1)[..., None] # (B, 1)",
            ): BATCHED_ARGS_2D,
            ("csum = xp.sum(c, axis=-1)", "csum = xp.sum(c, axis=+1)"): BATCHED_ARGS_2D,
            ("xp.sum(c * Kc, axis=-1)", "xp.sum(c * Kc, axis=+1)"): BATCHED_ARGS_2D,
            ("+ xp.sum(beta * aW, axis=-1)", "+ xp.sum(beta * aW, axis=+1)"): BATCHED_ARGS_2D,
            ("+ xp.sum(beta * beta, axis=-1)", "+ xp.sum(beta * beta, axis=+1)"): BATCHED_ARGS_2D,
            ("fy = xp.sum(c * K2s, axis=-1)", "fy = xp.sum(c * K2s, axis=+1)"): BATCHED_ARGS_2D,
        },
        "_one": {
            ("want_grad=want_grad,", ""): LOSS_VIA_GRADIENT,
            ("want_loss=want_loss,\n)", ")"): LOSS_BLOCK_ONLY,
        },
        "grad": {
            (
                "_, (ga, gW, galpha, gbeta) = "
                "_one(net, teacher, lam, want_grad=True, want_loss=False)",
                f"_, (ga, gW, galpha, gbeta) = _one(net, teacher, lam, want_grad=True, {after})",
            ): LOSS_BLOCK_ONLY
            for after in ("want_loss=None", "", "want_loss=True")
        },
        "teacher_arrays": {
            (
                "d = max([t.d for t in ts] + [d or 0])",
                "d = max([t.d for t in ts] + [d or 1])",
            ): "every teacher has d >= 1: the maximum is the same",
        },
        "loss": {
            (
                "return float(_one(net, teacher, 0.0, want_grad=False)[0][0])",
                "return float(_one(net, teacher, 0.0, want_grad=None)[0][0])",
            ): NONE_FALSY,
            (
                "return float(_one(net, teacher, 0.0, want_grad=False)[0][0])",
                "return float(_one(net, teacher, 1.0, want_grad=False)[0][0])",
            ): "without the gradient lam is converted and never used: the loss is unregularized",
            (
                "return float(_one(net, teacher, 0.0, want_grad=False)[0][0])",
                "return float(_one(net, teacher, 0.0, want_grad=True)[0][0])",
            ): LOSS_VIA_GRADIENT,
        },
        "mc_loss": {
            (
                (
                    "def mc_loss(net: Net, teacher: Teacher, n: int, seed: int, *, batch: int = "
                    "200_000):"
                ),
                (
                    "def mc_loss(net: Net, teacher: Teacher, n: int, seed: int, *, batch: int = "
                    "200001):"
                ),
            ): "a batch of 200001 draws the same stream",
        },
        "Net.unflat": {
            (
                "v = np.asarray(v, dtype=np.float64)",
                "v = np.asarray(v, dtype=None)",
            ): NET64,
            (
                "v = np.asarray(v, dtype=np.float64)",
                "v = np.asarray(v, )",
            ): NET64,
        },
    },
    "tools.sweep": {
        "gather": {
            (
                '_flatten("", {k: v for k, v in params.items()}, row)',
                "_flatten(None, {k: v for k, v in params.items()}, row)",
            ): NONE_PREFIX,
            (
                '_flatten("", res["metrics"], m)',
                '_flatten(None, res["metrics"], m)',
            ): NONE_PREFIX,
            (
                (
                    'df = pd.DataFrame(rows).sort_values("run_id", '
                    'kind="stable").reset_index(drop=True)'
                ),
                'df = pd.DataFrame(rows).sort_values("run_id", kind=None).reset_index(drop=True)',
            ): "run ids are unique: any sort agrees",
            (
                (
                    'df = pd.DataFrame(rows).sort_values("run_id", '
                    'kind="stable").reset_index(drop=True)'
                ),
                'df = pd.DataFrame(rows).sort_values("run_id", ).reset_index(drop=True)',
            ): "run ids are unique: any sort agrees",
            (
                (
                    'df = pd.DataFrame(rows).sort_values("run_id", '
                    'kind="stable").reset_index(drop=True)'
                ),
                (
                    'df = pd.DataFrame(rows).sort_values("run_id", '
                    'kind="XXstableXX").reset_index(drop=True)'
                ),
            ): "run ids are unique: any sort agrees",
            (
                (
                    'df = pd.DataFrame(rows).sort_values("run_id", '
                    'kind="stable").reset_index(drop=True)'
                ),
                (
                    'df = pd.DataFrame(rows).sort_values("run_id", '
                    'kind="STABLE").reset_index(drop=True)'
                ),
            ): "run ids are unique: any sort agrees",
            (
                "df.to_parquet(buf, index=False)",
                "df.to_parquet(buf, index=None)",
            ): INDEX_NONE,
            (
                "df.to_parquet(buf, index=False)",
                "df.to_parquet(buf, )",
            ): INDEX_NONE,
            (
                'atomic_write_csv(out / "table.csv", df.to_dict("records"))',
                'atomic_write_csv(out / "table.csv", df.to_dict("RECORDS"))',
            ): MESSAGE_CASE,
        },
    },
    "tools.runner": {
        "is_done": {
            (
                'res = json.loads(path.read_text(encoding="utf-8"))',
                "res = json.loads(path.read_text(encoding=None))",
            ): "the locale is UTF-8 here",
            (
                'res = json.loads(path.read_text(encoding="utf-8"))',
                'res = json.loads(path.read_text(encoding="UTF-8"))',
            ): "'UTF-8' names the same codec",
        },
    },
    "core.params": {
        "ListOf.validate": {
            (
                'out.append(self.item.validate(f"{name}[{i}]", v))',
                "out.append(self.item.validate(None, v))",
            ): (
                "every validate reads the name only for its ParameterError, which ListOf catches "
                "and replaces by its own, naming the list"
            ),
        },
        "Optional.validate": {
            (
                "return self.inner.validate(name, value)",
                "return self.inner.validate(None, value)",
            ): (
                "every validate reads the name only for its ParameterError, which Optional catches "
                "and replaces by its own, naming the parameter"
            ),
        },
    },
    "paper_a.flow": {
        "distance_history": {
            (
                "return (torch.linalg.norm(Wn - Ws, dim=(-2, -1)) / torch.linalg.norm(Ws)).numpy()",
                "return (torch.linalg.norm(Wn - Ws, dim=(+2, -1)) / torch.linalg.norm(Ws)).numpy()",
            ): "a FlowRun's W is (K, B, m, d): axis 2 is axis -2",
            (
                "Wn = metrics.normalize_by_margin(net, run.W, X, y, strict=False)",
                "Wn = metrics.normalize_by_margin(net, run.W, X, y, strict=None)",
            ): "normalize_by_margin reads strict only as a condition, where None is False",
        },
        "span_coordinates": {
            (
                "U, s, Vt = np.linalg.svd(X, full_matrices=False)",
                "U, s, Vt = np.linalg.svd(X, full_matrices=None)",
            ): "np.linalg.svd reads full_matrices only as a condition, where None is False",
        },
        "normalized_flow": {
            (f"{v} = torch.as_tensor({v}).to(dtype=W.dtype, device=W.device)", after): CPU
            for v in ("X", "y")
            for after in (
                f"{v} = torch.as_tensor({v}).to(dtype=W.dtype, device=None)",
                f"{v} = torch.as_tensor({v}).to(dtype=W.dtype, )",
            )
        }
        | {
            (
                "torch.as_tensor(lr_arr, dtype=W.dtype, device=W.device).reshape(B, 1, 1)",
                after,
            ): CPU
            for after in (
                "torch.as_tensor(lr_arr, dtype=W.dtype, device=None).reshape(B, 1, 1)",
                "torch.as_tensor(lr_arr, dtype=W.dtype, ).reshape(B, 1, 1)",
            )
        }
        | {
            ("for t in range(steps + 1):", "for t in range(steps + 2):"): LOOP_BREAKS,
            (
                "lse = torch.logsumexp(lossf.log_ell(q), dim=-1, keepdim=True)",
                "lse = torch.logsumexp(lossf.log_ell(q), dim=+1, keepdim=True)",
            ): LOG_ELL_2D,
        },
        "_numpy_flow": {
            ("a = net.a(W).numpy()", "a = net.a(None).numpy()"): (
                "the NumPy loop runs only for float64 CPU weights (_numpy_ok), where net.a(W) and "
                "net.a(None) are the same stored float64 CPU tensor"
            ),
            ("shared = Xn.ndim == 2", "shared = None"): TRANSPOSE_2D,
            (
                "Xt = Xn.T if shared else np.swapaxes(Xn, -1, -2)",
                "Xt = Xn.T if (shared) and False else np.swapaxes(Xn, -1, -2)",
            ): TRANSPOSE_2D,
            ("for t in range(steps + 1):", "for t in range(steps + 2):"): LOOP_BREAKS,
            (
                "mx = log_ell.max(axis=-1, keepdims=True)",
                "mx = log_ell.max(axis=+1, keepdims=True)",
            ): LOG_ELL_2D,
            (
                "lse = mx + np.log(np.exp(log_ell - mx).sum(axis=-1, keepdims=True))",
                "lse = mx + np.log(np.exp(log_ell - mx).sum(axis=+1, keepdims=True))",
            ): LOG_ELL_2D,
            (
                "finite = np.isfinite(hist[t]) & np.isfinite(Wn).reshape(B, -1).all(axis=1)",
                "finite = np.isfinite(hist[t]) & np.isfinite(Wn).reshape(B, -2).all(axis=1)",
            ): NEGATIVE_RESHAPE,
        },
        "log_flow_time": {
            (
                "out[1:] = np.logaddexp.accumulate(terms[:-1], axis=0)",
                "out[1:] = np.logaddexp.accumulate(terms[:-1], )",
            ): "accumulate's axis defaults to 0: the same call",
        },
        "rate_slopes": {
            ("s = np.asarray(s, dtype=float)", "s = np.asarray(s, dtype=None)"): AS_FLOAT,
            ("s = np.asarray(s, dtype=float)", "s = np.asarray(s, )"): AS_FLOAT,
            ("v2 = v.reshape(len(s), -1)", "v2 = v.reshape(len(s), -2)"): NEGATIVE_RESHAPE,
        },
    },
    "paper_b.hermite": {
        "relu_coefficient": {
            (
                "return (-1) ** (k // 2 - 1) * math.exp(logv)",
                "return (-1) ** (k // 2 + 1) * math.exp(logv)",
            ): "(-1)^(n + 1) = (-1)^(n - 1) for an integer n: the exponents differ by 2",
        },
        "lemma_i1_max": {
            **{
                ('method="bounded",', after): SCIPY_METHOD
                for after in ("method=None,", "", 'method="BOUNDED",')
            },
            (
                "lo, hi = th[max(i - 1, 0)], th[min(i + 1, grid - 1)]",
                "lo, hi = th[max(i - 2, 0)], th[min(i + 1, grid - 1)]",
            ): (
                "the wider bracket still holds the single peak of cos^k sin^p on [0, pi/2]: the "
                "maximum found agrees to the solver's tolerance (4e-9 relative at most over k up "
                "to 1e8, p up to 10; checked), not beyond it"
            ),
        },
        "lemma_i2_max": {
            **{
                ('method="bounded",', after): SCIPY_METHOD
                for after in ("method=None,", "", 'method="BOUNDED",')
            },
            ("k0 = 1.0 / lb", "k0 = 2.0 / lb"): (
                "only the centre of the search interval moves, which still holds the maximizer "
                "of a strictly concave objective: the maximum agrees to rounding (1.1e-14 at "
                "most over 600 betas; checked)"
            ),
            **{
                ("bounds=(math.log(k0) - 5, math.log(k0) + 5),", after): (
                    "a wider search interval around the same maximizer of a strictly concave "
                    "objective: the maximum agrees to rounding (3.7e-15 at most over 600 betas)"
                )
                for after in (
                    "bounds=(math.log(k0) - 6, math.log(k0) + 5),",
                    "bounds=(math.log(k0) - 5, math.log(k0) + 6),",
                )
            },
        },
        "correlated_moments": {
            ('X, Z = np.meshgrid(x, x, indexing="ij")', "X, Z = np.meshgrid(x, x, )"): (
                "the weights w_i w_j are symmetric in i and j, so the other indexing only "
                "reorders the terms of the sum: the same moments to rounding"
            ),
            (
                "Y = rho * X + math.sqrt(max(1.0 - rho * rho, 0.0)) * Z",
                "Y = rho * X - math.sqrt(max(1.0 - rho * rho, 0.0)) * Z",
            ): (
                "the Gauss-Hermite nodes and weights are symmetric (z and -z, equal weights), "
                "so Z -> -Z only reorders the terms of the sum: the same moments to rounding"
            ),
        },
        "hermite_normalized": {
            ("x = np.asarray(x, dtype=np.float64)", after): (
                "H is allocated float64: H[1] = x and x * H[k] turn x into float64 as the cast "
                "would, for integers, Fractions and floats of 64 bits or fewer (only an "
                "extended-precision x, which no caller passes, would round differently)"
            )
            for after in ("x = np.asarray(x, dtype=None)", "x = np.asarray(x, )")
        },
        "piecewise_linear_coefficients": {
            ("n = k_max // 2 + 2", "n = k_max // 3 + 2"): LAGUERRE_EXACT,
            ("n = k_max // 2 + 2", "n = k_max // 2 + 3"): LAGUERRE_EXACT,
        },
    },
    "paper_b.algorithm1": {
        "stage2": {
            ("net = Net(a, net1.W.copy(), 0.0, None)", "net = Net(a, net1.W.copy(), 0.0, )"): (
                "beta's default is None: the same call"
            ),
            ("net = Net(a, net1.W.copy(), 0.0, None)", "net = Net(a, net1.W.copy(), 1.0, None)"): (
                "alpha is overwritten on the next line by alpha_hat(net), which reads only a and W"
            ),
        },
    },
    "paper_b.features": {
        "solve_weighted_lasso": {
            (
                'def solve_weighted_lasso(G, b, c, weights, *, lam, solver="CLARABEL"):',
                'def solve_weighted_lasso(G, b, c, weights, *, lam, solver="clarabel"):',
            ): "cvxpy upper-cases a solver's name before using it (cvxpy/problems/problem.py)",
            (
                "z = np.linalg.lstsq(R.T, b, rcond=None)[0]",
                "z = np.linalg.lstsq(R.T, b, )[0]",
            ): RCOND_DEFAULT,
            ("a = cp.Variable(G.shape[0])", "a = cp.Variable(G.shape[1])"): (
                "G is square wherever the function returns (a non-square G fails in both, only "
                "the internal message differs)"
            ),
            **{
                ("av = np.asarray(a.value, dtype=np.float64)", after): (
                    "cvxpy gives a variable's value as a float64 array (a failed solve raises "
                    "before this line)"
                )
                for after in (
                    "av = np.asarray(a.value, dtype=None)",
                    "av = np.asarray(a.value, )",
                )
            },
        },
        "lasso_active_set": {
            (
                "viol = np.where(active, -np.inf, np.abs(g) - thr)",
                "viol = np.where(None, -np.inf, np.abs(g) - thr)",
            ): (
                "with weights >= 0 (a Lasso penalty; every caller passes 1.0) an active j, where "
                "|g_j + thr_j s_j| <= tol, has |g_j| - thr_j <= tol: it is chosen only when no "
                "inactive one exceeds tol, and then both stop (a negative weight, which the "
                "function does not reject, makes the problem non-convex)"
            ),
            ("rhs = b[A] - thr[A] * theta[A] / 2", "rhs = b[A] - thr[A] / theta[A] / 2"): (
                "theta is +-1 on the active set (the sign opposite to a gradient larger than "
                "thr_j >= 0, or the sign of a nonzero coefficient), and x / +-1 = x * +-1 exactly"
            ),
            (
                "on = np.abs(g[nz] + thr[nz] * np.sign(x[nz])).max(initial=0.0)",
                "on = np.abs(g[nz] + thr[nz] / np.sign(x[nz])).max(initial=0.0)",
            ): "sign(x) is +-1 where x != 0, and x / +-1 = x * +-1 exactly",
            ("if max(on, off) <= tol:", "if max(on, off) < tol:"): LASSO_DEAD_BREAK,
            # one of three breaks (keyed with the line above it; the other two are killed)
            ("if max(on, off) <= tol:\nbreak", "if max(on, off) <= tol:\nreturn"): (
                LASSO_DEAD_BREAK
            ),
            (
                "x_new = np.linalg.lstsq(GA, rhs, rcond=None)[0]",
                "x_new = np.linalg.lstsq(GA, rhs, )[0]",
            ): RCOND_DEFAULT,
            (
                "active = np.zeros(len(b), dtype=bool)",
                "active = np.zeros(len(b), dtype=None)",
            ): LASSO_ACTIVE_FLOAT,
            ("active = np.zeros(len(b), dtype=bool)", "active = np.zeros(len(b), )"): (
                LASSO_ACTIVE_FLOAT
            ),
            (
                "g = gradient(x) if g is None else g",
                "g = gradient(x) if (g is None) or True else g",
            ): LASSO_SAME_GRADIENT,
            ("on, _ = violation(a, g)", "on, _ = violation(a, None)"): LASSO_SAME_GRADIENT,
            ("on, _ = violation(a, g)", "on, _ = violation(a, )"): LASSO_SAME_GRADIENT,
        },
        "half_mass_radius": {
            (
                'sel = sel[np.argsort(dl[sel], kind="stable")]',
                'sel = sel[np.argsort(dl[sel], kind="STABLE")]',
            ): "NumPy reads a sort kind by its first letter, in either case: 'S' is stable",
        },
        "residual_terms": {
            (
                "W = net.W * s[:, None] # Assumption F.1: w_j.w*_i >= 0",
                "W = net.W / s[:, None] # Assumption F.1: w_j.w*_i >= 0",
            ): "s is +-1 here (its zeros are set to 1 first), and x / (+-1) = x * (+-1) exactly",
            (
                "R3 = INV_SQRT_2PI * (teacher.a @ ns - net.a @ n) * np.ones(len(X))",
                "R3 = INV_SQRT_2PI * (teacher.a @ ns - net.a @ n) / np.ones(len(X))",
            ): "x / 1.0 = x * 1.0 exactly, with the same shape",
        },
    },
    "paper_b.certificate": {
        "lemma10_proof_radius": {
            (
                "cum = _abs_relu_coefficient_sums(2 * ell(lo))",
                "cum = _abs_relu_coefficient_sums(3 * ell(lo))",
            ): (
                "for lo <= pi/2 (the default 1e-2, the only value the chapter uses) every index "
                "read is at most 2 ell(lo), so the longer table changes nothing; lo > pi/2 is "
                "outside the search (pi/2 is its upper end) and unguarded: noted to fix"
            ),
        },
        "relu_ge_prime": {
            (
                "H = herm.hermite_normalized(max(ell - 2, 0), z)",
                "H = herm.hermite_normalized(max(ell - 2, 1), z)",
            ): (
                "differs only at ell = 2, where it also computes h_1(z) = z, a copy that cannot "
                "overflow, which H[: ell - 1] = H[:1] drops; ell < 2 raises in head() either way"
            ),
            (
                "return (z > 0).astype(np.float64) - np.tensordot(c, H[: ell - 1], axes=1)",
                "return (z > 0).astype(None) - np.tensordot(c, H[: ell - 1], axes=1)",
            ): "astype(None) is astype(float64): np.dtype(None) is float64",
            (
                "return (z > 0).astype(np.float64) - np.tensordot(c, H[: ell - 1], axes=1)",
                "return (z > 0).astype(np.float64) - np.tensordot(c, H[: ell + 1], axes=1)",
            ): (
                "H has max(ell - 2, 0) + 1 = ell - 1 rows for ell >= 2, so H[: ell + 1] is all of "
                "H like H[: ell - 1]; ell < 2 raises in head() first"
            ),
        },
        "solve": {
            ("np.fill_diagonal(t, 1.0)", "np.fill_diagonal(t, 2.0)"): (
                "the diagonal of t is read only through kappa, which clips t to [-1, 1] first: "
                "2.0 becomes 1.0"
            ),
            **{
                (
                    f'{v} = np.einsum("{sub}", {args})',
                    f'{v} = np.einsum("{sub.upper()}", {args})',
                ): (
                    "einsum's subscripts are labels: upper-case ones, renamed consistently, give "
                    "the same contraction"
                )
                for v, sub, args in (
                    ("Tu", "jdk,id->ijk", "T, U"),
                    ("uT", "jd,idk->ijk", "U, T"),
                    ("TT", "idk,jdl->ikjl", "T, T"),
                )
            },
        },
        "tangent_bases": {
            (
                "q, _, _ = np.linalg.svd(P, full_matrices=False)",
                "q, _, _ = np.linalg.svd(P, full_matrices=None)",
            ): "svd tests `if full_matrices:`, and None is falsy: the reduced SVD as with False",
            **{
                ("q, _, _ = np.linalg.svd(P, full_matrices=False)", after): (
                    "the full SVD only appends columns beyond min(d, r) to q, of which only the "
                    "first r - 1 are used (equal to 3e-16 on 3,000 random cases); a rounding-level "
                    "rotation inside the tangent space changes neither eta, alpha, b_j nor p"
                )
                for after in (
                    "q, _, _ = np.linalg.svd(P, )",
                    "q, _, _ = np.linalg.svd(P, full_matrices=True)",
                )
            },
        },
        "sign_flip": {
            ("flip = s < 0", "flip = s <= 0"): SIGNS_NONZERO,
            ("flip = s < 0", "flip = s < 1"): SIGNS_NONZERO,
            (
                "return Net(net.a.copy(), net.W * s[:, None], net.alpha, beta)",
                "return Net(net.a.copy(), net.W / s[:, None], net.alpha, beta)",
            ): "s is +-1 (or NaN) here, and x / s is x * s exactly in IEEE arithmetic",
        },
        "Certificate.eta_grad": {
            ("k2bw = np.where(at_pole, 0.0, k2 * bw)", "k2bw = np.where(None, 0.0, k2 * bw)"): (
                "at a pole k2 is kappa''(0), finite, and bw = b_j . u_j is 0 up to rounding "
                "(b_j is tangent at u_j): the product is at the rounding level"
            ),
            (
                "at_pole = np.abs(np.clip(t, -1, 1)) >= 1.0 # kappa'' infinite, b_j.w = 0 there",
                "at_pole = np.abs(np.clip(t, None, 1)) >= 1.0 # kappa'' infinite, b_j.w = 0 there",
            ): CLIP_POLE,
            (
                "at_pole = np.abs(np.clip(t, -1, 1)) >= 1.0 # kappa'' infinite, b_j.w = 0 there",
                "at_pole = np.abs(np.clip(t, -1, None)) >= 1.0 # kappa'' infinite, b_j.w = 0 there",
            ): CLIP_POLE,
            (
                "at_pole = np.abs(np.clip(t, -1, 1)) >= 1.0 # kappa'' infinite, b_j.w = 0 there",
                "at_pole = np.abs(np.clip(t, -2, 1)) >= 1.0 # kappa'' infinite, b_j.w = 0 there",
            ): CLIP_POLE,
            (
                "at_pole = np.abs(np.clip(t, -1, 1)) >= 1.0 # kappa'' infinite, b_j.w = 0 there",
                "at_pole = np.abs(np.clip(t, -1, 2)) >= 1.0 # kappa'' infinite, b_j.w = 0 there",
            ): CLIP_POLE,
            (
                "k2 = kappa(np.where(at_pole, 0.0, t), self.ell, 2)",
                "k2 = kappa(np.where(None, 0.0, t), self.ell, 2)",
            ): POLE_REPLACED,
            (
                "k2 = kappa(np.where(at_pole, 0.0, t), self.ell, 2)",
                "k2 = kappa(np.where(at_pole, None, t), self.ell, 2)",
            ): POLE_REPLACED,
            (
                "k2 = kappa(np.where(at_pole, 0.0, t), self.ell, 2)",
                "k2 = kappa(np.where(at_pole, 1.0, t), self.ell, 2)",
            ): POLE_REPLACED,
        },
    },
    "paper_a.rankdecay": {
        "log_slopes": {
            (
                "v = np.asarray(values, dtype=np.float64)",
                "v = np.asarray(values, dtype=None)",
            ): AS_FLOAT,
            ("v = np.asarray(values, dtype=np.float64)", "v = np.asarray(values, )"): AS_FLOAT,
        },
        "relative_curves": {
            (
                (
                    '[np.asarray(results[(*key_prefix, s)][0]["stable_rank"], float)'
                    " for s in run_seeds]"
                ),
                (
                    '[np.asarray(results[(*key_prefix, s)][0]["stable_rank"], None)'
                    " for s in run_seeds]"
                ),
            ): AS_FLOAT,
            (
                (
                    '[np.asarray(results[(*key_prefix, s)][0]["stable_rank"], float)'
                    " for s in run_seeds]"
                ),
                ('[np.asarray(results[(*key_prefix, s)][0]["stable_rank"], ) for s in run_seeds]'),
            ): AS_FLOAT,
        },
    },
    "paper_a.lowrank": {
        "gradient_gram_metric": {
            (
                "A = net.a(W).unsqueeze(-1) * net.phi.grad(net.preactivations(W, Xw)) # (B, m, n)",
                "A = net.a(W).unsqueeze(+1) * net.phi.grad(net.preactivations(W, Xw)) # (B, m, n)",
            ): ONE_DIM,
            (
                (
                    "ratio = torch.where(off & (xx > 0), gram.abs() / "
                    "torch.where(xx > 0, xx, 1.0), 0.0)"
                ),
                (
                    "ratio = torch.where(off & (xx > 0), gram.abs() / "
                    "torch.where(xx > 0, xx, 2.0), 0.0)"
                ),
            ): (
                "the placeholder divides only where xx = 0, which the outer where replaces by "
                "0.0 (and whose zero gradient it passes back as 0 either way)"
            ),
        },
        "proxy_pl_constant": {
            ("if consts.rho >= 1:", "if consts.rho > 1:"): (
                "differs only at rho = 1 exactly, where the formula's factor 1 - rho is 0.0: "
                "gamma R_min^2 0.0 / (R_max sqrt(2 n)) is +0.0, the value returned at rho >= 1, "
                "for the positive finite constants data_constants gives"
            ),
        },
        "risk_bound": {
            ("t = np.asarray(t, dtype=np.float64)", "t = np.asarray(t, dtype=None)"): T_PROMOTED,
            ("t = np.asarray(t, dtype=np.float64)", "t = np.asarray(t, )"): T_PROMOTED,
        },
        "grad_at_zero_norm": {
            ("X = np.asarray(X, dtype=np.float64)", "X = np.asarray(X, dtype=None)"): PROMOTED,
            ("X = np.asarray(X, dtype=np.float64)", "X = np.asarray(X, )"): PROMOTED,
            ("y = np.asarray(y, dtype=np.float64)", "y = np.asarray(y, dtype=None)"): PROMOTED,
            ("y = np.asarray(y, dtype=np.float64)", "y = np.asarray(y, )"): PROMOTED,
        },
    },
    "paper_a.onestep": {
        "run_batch": {
            (
                "omega = torch.as_tensor(np.asarray(omega, dtype=np.float64).reshape(-1))",
                "omega = torch.as_tensor(np.asarray(omega, dtype=np.float64).reshape(-2))",
            ): NEGATIVE_RESHAPE,
            (
                "lr = torch.as_tensor(np.asarray(lr, dtype=np.float64).reshape(-1))",
                "lr = torch.as_tensor(np.asarray(lr, dtype=np.float64).reshape(-2))",
            ): NEGATIVE_RESHAPE,
            (
                "realized = lowrank.init_condition(s.net, W0, X, y, lr=lr, gamma=s.gamma, eps=eps)",
                "realized = lowrank.init_condition(s.net, W0, X, y, lr=lr, gamma=None, eps=eps)",
            ): GAMMA_UNREAD,
            ('loss="logistic",', ""): LOGISTIC_DEFAULT,
        },
        "Setup.init_over_step": {
            ("np.asarray(omega, dtype=np.float64)", "np.asarray(omega, dtype=None)"): AS_FLOAT,
            ("np.asarray(omega, dtype=np.float64)", "np.asarray(omega, )"): AS_FLOAT,
        },
    },
    "paper_a.losses": {
        "logistic_log_loss": {
            ("big = q > 30.0", "big = q >= 30.0"): (
                "differs only at q = 30 exactly, where both branches give the same value in "
                "float64 and float32 (the trainer's dtypes) and the same autograd gradient; checked"
            ),
        },
        "numpy_logistic_log_loss": {
            ("big = q > 30.0", "big = q >= 30.0"): (
                "differs only at q = 30 exactly, where both branches give the same float64 "
                "(the flow's NumPy loop, the only caller, works in float64; checked)"
            ),
            ('with np.errstate(divide="ignore"):', "with np.errstate(divide=None):"): (
                "in float64 (the flow's NumPy loop, the only caller) log never meets 0 here: "
                "softplus(-q) >= 9e-14 for q <= 30, and q > 30 is replaced by 0 first"
            ),
            ("safe = np.where(big, 0.0, q)", "safe = np.where(big, 1.0, q)"): (
                "safe only matters where big is False; where it is True the final where "
                "discards the finite log softplus(-1) as it discards log 2"
            ),
            ("safe = np.where(big, 0.0, q)", "safe = np.where(None, 0.0, q)"): (
                "safe only matters where big is False, where it is q either way; the values "
                "where big is True (a log of 0 under errstate(divide='ignore')) are discarded"
            ),
        },
        "numpy_logistic_g": {
            (
                "return np.where(q >= 0, e / (1 + e), 1 / (1 + e))",
                "return np.where(q > 0, e / (1 + e), 1 / (1 + e))",
            ): "at q = 0 both branches are 1 / 2 exactly (e = 1)",
        },
    },
    "paper_b.gd_backend": {
        "stage1_batched": {
            (
                "b = NetBatch.from_nets(nets0, like)",
                "b = NetBatch.from_nets(nets0, None)",
            ): LIKE_ONLY,
            ("b = NetBatch.from_nets(nets0, like)", "b = NetBatch.from_nets(nets0, )"): LIKE_ONLY,
        },
        "_run_epochs": {
            ("+ xp.sum(gbeta * gbeta, axis=-1)", "+ xp.sum(gbeta * gbeta, axis=+1)"): BATCH_2D,
            ("xp.sum(ga * ga, axis=-1)", "xp.sum(ga * ga, axis=+1)"): BATCH_2D,
            (
                "reg = L + 0.5 * lam_x * (xp.sum(a * a, axis=-1) + xp.sum(W * W, axis=(-2, -1)))",
                "reg = L + 0.5 * lam_x * (xp.sum(a * a, axis=+1) + xp.sum(W * W, axis=(-2, -1)))",
            ): BATCH_2D,
            (
                "for t in range(n_steps + 1): # as stage3: the last pass only records the "
                "epoch's end",
                "for t in range(n_steps + 2): # as stage3: the last pass only records the "
                "epoch's end",
            ): LOOP_BREAKS,
            (
                "a, W, alpha, beta, teacher=ta, lam=lam_x, want_loss=record\n)",
                "a, W, alpha, beta, teacher=ta, lam=lam_x, )",
            ): (
                "want_loss (default True) only decides whether the unused loss is computed: the "
                "gradient reads none of it, and L is read only when record is True"
            ),
        },
        "stage3_batched": {
            **{
                (
                    "vals = to_numpy(xp.stack(rec_vals)) if rec_vals else np.zeros((0, 3, B))",
                    after,
                ): (
                    "the else branch runs only for epochs = 0, when rec_meta is empty too (both "
                    "grow together): vals is then never read nor returned, whatever its shape"
                )
                for after in (
                    "vals = to_numpy(xp.stack(rec_vals)) if rec_vals else np.zeros((1, 3, B))",
                    "vals = to_numpy(xp.stack(rec_vals)) if rec_vals else np.zeros((0, 4, B))",
                )
            },
        },
    },
    "paper_b.fits": {
        "bootstrap": {
            (
                f'{guard}\nreturn Estimate(value, float("inf"), -float("inf"), float("inf"), reps)',
                f"{guard}\n{after}",
            ): "float() reads 'inf' case-insensitively: the same infinity"
            # the same return in two places, keyed with the line above it
            for guard in ("if reps < 2:", "if out.size < n_boot // 2:")
            for after in (
                'return Estimate(value, float("INF"), -float("inf"), float("inf"), reps)',
                'return Estimate(value, float("inf"), -float("INF"), float("inf"), reps)',
                'return Estimate(value, float("inf"), -float("inf"), float("INF"), reps)',
            )
        },
    },
    "paper_a.xor": {
        "_measure": {
            **{
                ("sel = torch.as_tensor(idx[rows], device=Xt.device)", after): (
                    "the index tensor only selects rows of Xt: made on the default device (the "
                    "CPU) it indexes a tensor on any device to the same values there"
                )
                for after in (
                    "sel = torch.as_tensor(idx[rows], device=None)",
                    "sel = torch.as_tensor(idx[rows], )",
                )
            },
        },
        "first_d_at_chance": {
            ('first = float("nan")', 'first = float("NAN")'): "float() reads 'NAN' as nan",
            (
                "for dd, ok in zip(t_.d, t_.at_chance, strict=True):",
                "for dd, ok in zip(t_.d, t_.at_chance, strict=None):",
            ): STRICT_GUARD,
            (
                "for dd, ok in zip(t_.d, t_.at_chance, strict=True):",
                "for dd, ok in zip(t_.d, t_.at_chance, ):",
            ): STRICT_GUARD,
            (
                "for dd, ok in zip(t_.d, t_.at_chance, strict=True):",
                "for dd, ok in zip(t_.d, t_.at_chance, strict=False):",
            ): STRICT_GUARD,
        },
    },
    "paper_b.random_features": {
        "frozen_best_loss": {
            ("keep = ev > 1e-12 * ev.max()", "keep = ev >= 1e-12 * ev.max()"): TIE,
        },
        "local_slopes": {
            ("ms = np.asarray(ms, dtype=np.float64)", "ms = np.asarray(ms, dtype=None)"): AS_FLOAT,
            ("ms = np.asarray(ms, dtype=np.float64)", "ms = np.asarray(ms, )"): AS_FLOAT,
            (
                "losses = np.asarray(losses, dtype=np.float64)",
                "losses = np.asarray(losses, dtype=None)",
            ): AS_FLOAT,
            (
                "losses = np.asarray(losses, dtype=np.float64)",
                "losses = np.asarray(losses, )",
            ): AS_FLOAT,
        },
    },
    "page.claims": {
        "statuses": {
            (
                (
                    '[by_id[sid]] if sid in by_id else (by_label.get(sid, []) if "#" not in sid '
                    "else [])"
                ),
                (
                    '[by_id[sid]] if sid in by_id else (by_label.get(sid, []) if ("#" not in sid) '
                    "or True else [])"
                ),
            ): NO_HASH_IN_LABELS,
            (
                (
                    '[by_id[sid]] if sid in by_id else (by_label.get(sid, []) if "#" not in sid '
                    "else [])"
                ),
                (
                    '[by_id[sid]] if sid in by_id else (by_label.get(sid, []) if "XX#XX" not in '
                    "sid else [])"
                ),
            ): NO_HASH_IN_LABELS,
        },
    },
    "paper_b.early_stages": {
        "first_step_geometry": {
            **{
                ('"off": np.sqrt(np.clip(1 - frac_in**2, 0, 1)),', after): (
                    "frac_in is a ratio of norms, >= 0 or NaN, so 1 - frac_in^2 <= 1: the upper "
                    "bound is never reached"
                )
                for after in (
                    '"off": np.sqrt(np.clip(1 - frac_in**2, 0, None)),',
                    '"off": np.sqrt(np.clip(1 - frac_in**2, 0, 2)),',
                )
            },
        },
    },
    "paper_a.sgd": {
        "batch_schedule": {
            (
                "rng = np.random.default_rng([int(seed), 7919])",
                "rng = np.random.default_rng([int(seed), 7920])",
            ): (
                "another fixed key of the schedule's stream: the same law (epochs of uniform "
                "random permutations, the seed still chooses the draw); the book's recorded "
                "numbers are compared by nbval, not by the unit tests"
            ),
            (
                "epochs = -(-need // n) if need else 0",
                "epochs = -(-need // n) if (need) or True else 0",
            ): "-(-0 // n) is 0: the formula gives the 0 of the other branch",
            (
                (
                    "np.concatenate([rng.permutation(n) for _ in range(epochs)]) if epochs else "
                    "np.zeros(0, int)"
                ),
                (
                    "np.concatenate([rng.permutation(n) for _ in range(epochs)]) if epochs else "
                    "np.zeros(1, int)"
                ),
            ): ("reached only with need = 0 (steps = 0), where order[:0] is empty either way"),
        },
        "glorot_uniform_init": {
            (
                "scales = torch.as_tensor(np.asarray(init_scales, dtype=np.float64).reshape(-1))",
                "scales = torch.as_tensor(np.asarray(init_scales, dtype=np.float64).reshape(-2))",
            ): NEGATIVE_RESHAPE,
            (
                "scales = torch.as_tensor(np.asarray(init_scales, dtype=np.float64).reshape(-1))",
                "scales = torch.as_tensor(np.asarray(init_scales, dtype=np.float64).reshape(None))",
            ): (
                "reshape(None) keeps the shape, and scales is read only through numel(), "
                "elementwise tests and reshape(-1, 1, 1), which do not depend on it"
            ),
        },
        "loss_and_dF": {
            ("q = y.reshape(1, -1) * F[..., 0]", "q = y.reshape(-1) * F[..., 0]"): BROADCAST_ROW,
            (
                "dF = (-y.reshape(1, -1) * torch.sigmoid(-q) / n).unsqueeze(-1)",
                "dF = (-y.reshape(-1) * torch.sigmoid(-q) / n).unsqueeze(-1)",
            ): BROADCAST_ROW,
            (
                "yi = y.long().reshape(1, -1, 1).expand(F.shape[0], -1, 1)",
                "yi = y.long().reshape(-1, 1).expand(F.shape[0], -1, 1)",
            ): "expand adds the leading axis: the same (B, n, 1) index",
            (
                "yi = y.long().reshape(1, -1, 1).expand(F.shape[0], -1, 1)",
                "yi = y.long().reshape(1, -1, 1).expand(F.shape[0], -1, 2)",
            ): (
                "gather with two equal index columns gives two equal columns, of which [..., 0] "
                "keeps the first; a label out of range raises either way"
            ),
            (
                "onehot = torch.nn.functional.one_hot(y.long(), F.shape[-1]).to(F.dtype)",
                "onehot = torch.nn.functional.one_hot(y.long(), F.shape[-1]).to(None)",
            ): (
                "the 0/1 integers are subtracted from a tensor of F's dtype, which PyTorch "
                "promotes them to: the same exact values"
            ),
        },
        "loss_and_grad": {
            (
                "dZ = torch.matmul(dF, p.a.transpose(1, 2)) * (Z > 0).to(Z.dtype) # (B, n, m)",
                "dZ = torch.matmul(dF, p.a.transpose(1, 2)) * (Z > 0).to(None) # (B, n, m)",
            ): (
                "a float tensor times a bool one is of the float dtype, with the 0/1 values: "
                "the same products"
            ),
        },
    },
    "paper_b.teacher": {
        "angles_up_to_sign": {
            (
                "return np.arccos(np.clip(np.abs(U @ V.T), 0.0, 1.0))",
                "return np.arccos(np.clip(np.abs(U @ V.T), None, 1.0))",
            ): "an absolute value is >= 0 (or NaN): the lower clip never acts",
        },
        "constants": {
            ("sv = np.linalg.svd(U, compute_uv=False)", "sv = np.linalg.svd(U, compute_uv=None)"): (
                NONE_FALSY
            ),
            ("r = int(np.sum(sv > 1e-10 * sv[0]))", "r = int(np.sum(sv >= 1e-10 * sv[0]))"): TIE,
            (
                "rank_H = int(np.sum(np.abs(ev) > 1e-10 * np.abs(ev[0])))",
                "rank_H = int(np.sum(np.abs(ev) >= 1e-10 * np.abs(ev[0])))",
            ): TIE,
        },
        "assumption_values": {
            **{
                (
                    '"r_over_d": max(c["r"] / t.d for c, t in zip(cs, teachers, strict=True)),',
                    after,
                ): (
                    "cs is built by iterating over teachers, so the two have the same length for "
                    "a teacher or any sequence of them; a one-shot iterator is refused with "
                    "ValueError either way (zip's, or max's of an empty sequence)"
                )
                for after in (
                    '"r_over_d": max(c["r"] / t.d for c, t in zip(cs, teachers, strict=None)),',
                    '"r_over_d": max(c["r"] / t.d for c, t in zip(cs, teachers, )),',
                    '"r_over_d": max(c["r"] / t.d for c, t in zip(cs, teachers, strict=False)),',
                )
            },
        },
    },
    "core.stats": {
        "fit_slope": {
            (
                "ssr = ((y - (slope[:, None] * x + icpt[:, None])) ** 2).sum(axis=-1)",
                "ssr = ((y - (slope[:, None] * x + icpt[:, None])) ** 2).sum(axis=+1)",
            ): "reached only for a 2-D y (1-D returns before, other shapes are refused): axis 1 "
            "is axis -1",
        },
        "t_interval": {
            (
                "v = np.asarray(values, dtype=np.float64).reshape(-1)",
                "v = np.asarray(values, dtype=np.float64).reshape(-2)",
            ): NEGATIVE_RESHAPE,
            (
                "v = np.asarray(values, dtype=np.float64).reshape(-1)",
                "v = np.asarray(values, dtype=np.float64).reshape(None)",
            ): (
                "reshape(None) keeps the shape, and what follows reads v only through v.size, "
                "v.mean() and v.std(ddof=1), which take every entry either way (only NumPy's "
                "order of summation may differ, to rounding)"
            ),
        },
    },
    "paper_a.images": {
        "parse_records": {
            (
                "rec = np.frombuffer(raw, dtype=np.uint8).reshape(-1, RECORD_BYTES)",
                "rec = np.frombuffer(raw, dtype=np.uint8).reshape(-2, RECORD_BYTES)",
            ): NEGATIVE_RESHAPE,
        },
    },
    "paper_b.samples": {
        "gradient_error": {
            ("G = pop.grad(net0, teacher, 0.0).W", "G = pop.grad(net0, teacher, ).W"): ZERO_LAM,
            ("Gh = empirical_grad(net0, X, y, 0.0).W", "Gh = empirical_grad(net0, X, y, ).W"): (
                ZERO_LAM
            ),
        },
        "per_sample_trace": {
            (
                (
                    "net0: Net, teacher: Teacher, n: int, seed: int, *, batch: int = 20_000, "
                    "return_se: bool = False"
                ),
                (
                    "net0: Net, teacher: Teacher, n: int, seed: int, *, batch: int = 20001, "
                    "return_se: bool = False"
                ),
            ): BATCH_SPLIT,
            ("G = pop.grad(net0, teacher, 0.0).W", "G = pop.grad(net0, teacher, ).W"): ZERO_LAM,
        },
        "predicted_error": {
            ("G = pop.grad(net0, teacher, 0.0).W", "G = pop.grad(net0, teacher, ).W"): ZERO_LAM,
        },
    },
}
Key = tuple[str, str, str, str]  # module, function, changed lines before, after


def norm(lines) -> str:
    """Changed lines as one string: each line's runs of whitespace made one space, lines joined
    by a newline."""
    if isinstance(lines, str):
        lines = lines.split("\n")
    return "\n".join(" ".join(line.split()) for line in lines)


EQUIVALENT: dict[Key, str] = {
    (f"twolayer.{mod}", func, norm(before), norm(after)): why
    for mod, funcs in _EQ.items()
    for func, pairs in funcs.items()
    for (before, after), why in pairs.items()
}


@dataclass(frozen=True)
class Mutant:
    name: str  # mutmut's: twolayer.paper_a.kkt.x_certify__mutmut_12
    module: str
    function: str  # "certify", or "Class.method"
    before: str  # the changed lines, normalized (norm)
    after: str

    @property
    def key(self) -> Key:
        return (self.module, self.function, self.before, self.after)


def function_of(name: str) -> tuple[str, str]:
    """``twolayer.paper_a.kkt.x_certify__mutmut_12`` -> ``(twolayer.paper_a.kkt, certify)``;
    ``twolayer.paper_b.population.xǁNetǁunflat__mutmut_3`` -> ``(..., Net.unflat)``."""
    m = re.match(r"(.+?)\.x(?:_|ǁ([^ǁ]+)ǁ)(.+?)__mutmut_(?:\d+|orig)$", name)
    if not m:
        return name, ""
    mod, cls, func = m.groups()
    return mod, f"{cls}.{func}" if cls else func


def changed_lines(orig: list[str], mutant: list[str], context: int = 0) -> tuple[str, str]:
    """The lines a mutant changes in its function (the ``-`` and ``+`` lines of its diff),
    normalized: ``(before, after)``; with ``context``, that many unchanged lines above the
    first change lead both (to tell apart the same change made on two equal lines)."""
    before, after = [], []
    sm = difflib.SequenceMatcher(None, orig, mutant, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag != "equal":
            if not before and not after and context:
                lead = orig[max(i1 - context, 1) : i1]  # never the def line (renamed)
                before, after = list(lead), list(lead)
            before += orig[i1:i2]
            after += mutant[j1:j2]
    return norm(before), norm(after)


MAX_CONTEXT = 5  # lines of context tried to tell apart mutants with the same diff


def mutants_of_source(source: str, module: str, filename: str = "") -> dict[str, Mutant]:
    """Every mutant mutmut makes of a module's source, with its diff (mutmut's generator, as
    ``mutmut run`` calls it; no test runs)."""
    from mutmut.mutation.file_mutation import mutate_file_contents

    mf = mutate_file_contents(filename or module, source)
    return mutants_of_file(mf.code, mf.mutant_names, mf.line_span_by_function_name, module)


def mutants_of_file(code: str, generated_names, spans, module: str) -> dict[str, Mutant]:
    """The mutants of a file mutmut generated: ``code`` holds, for each function, its copy
    ``x_f__mutmut_orig`` and its mutants ``x_f__mutmut_1, ...`` (``xǁClassǁf...`` for a
    method); ``spans[name]`` gives their first and last lines (``.start``, ``.end``, from 1)."""
    lines = code.split("\n")
    out, texts = {}, {}
    for generated in generated_names:  # x_certify__mutmut_12, xǁNetǁunflat__mutmut_3
        base = generated.partition("__mutmut_")[0]
        orig_span, span = spans[base + "__mutmut_orig"], spans[generated]
        plain = re.sub(r"^x(_|ǁ[^ǁ]+ǁ)", "", base)
        orig = lines[orig_span.start - 1 : orig_span.end]
        mut = lines[span.start - 1 : span.end]
        orig = [ln.replace(base + "__mutmut_orig", plain) for ln in orig]
        mut = [ln.replace(generated, plain) for ln in mut]
        name = f"{module}.{generated}"
        texts[name] = (orig, mut)
        out[name] = Mutant(name, module, function_of(name)[1], *changed_lines(orig, mut))
    # the same change on two equal lines of a function (a `break` made `return` in two
    # places) would share a key, and one entry would list both: such mutants are keyed with
    # the fewest lines of context above the change that tell them apart
    for context in range(1, MAX_CONTEXT + 1):
        groups: dict[Key, list[str]] = {}
        for name, mu in out.items():
            groups.setdefault(mu.key, []).append(name)
        shared = [n for names in groups.values() if len(names) > 1 for n in names]
        if not shared:
            break
        for name in shared:
            mu = out[name]
            before, after = changed_lines(*texts[name], context=context)
            out[name] = Mutant(name, module, mu.function, before, after)
    return out


def source_path(module: str, root: Path, lib: str = "lib") -> Path:
    return root / lib / (module.replace(".", "/") + ".py")


def in_scope(module: str, function: str) -> bool:
    return module not in FUNCTIONS or function in FUNCTIONS[module]


def generate(modules: list[str], root: Path = ROOT, lib: str = "lib") -> dict[str, Mutant]:
    out = {}
    for mod in modules:
        path = source_path(mod, root, lib)
        for name, mu in mutants_of_source(path.read_text(), mod, str(path)).items():
            if in_scope(mod, mu.function):
                out[name] = mu
    return out


def stale_keys(mutants: dict[str, Mutant], modules: list[str]) -> list[Key]:
    """The ``EQUIVALENT`` keys of these modules that match no current mutant."""
    keys = {mu.key for mu in mutants.values()}
    return [k for k in EQUIVALENT if k[0] in modules and k not in keys]


def unknown_must_kill(mutants: dict[str, Mutant], modules: list[str]) -> list[str]:
    """``MUST_KILL`` names of these modules that no current mutant belongs to (a renamed or
    removed function, or one mutmut makes no mutant of)."""
    have = {(mu.module, mu.function) for mu in mutants.values()}
    return [
        f"{mod}.{func}"
        for mod in modules
        for func in MUST_KILL.get(mod, ())
        if (mod, func) not in have
    ]


def parse_results(text: str) -> dict[str, str]:
    """``mutmut results --all true``: one ``    NAME: STATUS`` line per mutant."""
    status = {}
    for line in text.splitlines():
        if "__mutmut_" in line and ":" in line:
            name, st = line.strip().rsplit(":", 1)
            status[name.strip()] = st.strip()
    return status


KILLED = ("killed", "timeout", "segfault", "caught by type check")  # segfault: killed by -9
EQUIV = "equivalent"  # survived, listed in EQUIVALENT


@dataclass
class Report:
    counts: dict[str, collections.Counter]  # module -> status -> count
    must_kill: list[Mutant]  # in a must-kill function, not killed, not equivalent
    survivors: list[Mutant]  # elsewhere, survived or not reached, not equivalent
    killed_equivalent: list[Mutant]  # listed as equivalent, yet killed
    unchecked: int  # mutants mutmut has no result for


def account(mutants: dict[str, Mutant], status: dict[str, str], modules: list[str]) -> Report:
    """Sort the mutants of ``modules`` by their status (``parse_results``)."""
    rep = Report({m: collections.Counter() for m in modules}, [], [], [], 0)
    for name, mu in sorted(mutants.items(), key=lambda kv: _order(kv[0])):
        if mu.module not in modules:
            continue
        st = status.get(name, "not checked")
        equivalent = mu.key in EQUIVALENT
        if st in KILLED and equivalent:
            rep.killed_equivalent.append(mu)
        if st == "survived" and equivalent:
            st = EQUIV
        rep.counts[mu.module][st] += 1
        if st in KILLED or st == EQUIV:
            continue
        rep.unchecked += st == "not checked"
        if mu.function in MUST_KILL.get(mu.module, ()):
            rep.must_kill.append(mu)
        elif st != "not checked":
            rep.survivors.append(mu)
    return rep


def _order(name: str) -> tuple[str, int]:
    head, _, k = name.rpartition("__mutmut_")
    return head, int(k) if k.isdigit() else 0


def show(mu: Mutant) -> str:
    return f"{mu.name} ({mu.function}): {mu.before!r} -> {mu.after!r}"


def entry(mu: Mutant, why: str = "WHY") -> str:
    """The ``_EQ`` entry of a mutant, to paste under its module and function."""

    def lit(s: str, indent: int) -> str:
        # a long line as implicitly joined pieces, split after a space (norm keeps the spaces)
        width = 96 - indent
        pieces, cur = [], ""
        for word in re.split(r"(?<= )", s):
            if cur and len(repr(cur + word)) > width:
                pieces.append(cur)
                cur = ""
            cur += word
        pieces.append(cur)
        if len(pieces) == 1:
            return repr(s)
        pad = " " * indent
        return "(\n" + "".join(f"{pad}    {p!r}\n" for p in pieces) + pad + ")"

    return (
        f"# {mu.module.removeprefix('twolayer.')} / {mu.function}\n"
        f"(\n    {lit(mu.before, 4)},\n    {lit(mu.after, 4)},\n): {why},"
    )


def summary_text(
    rep: Report,
    date: str,
    version: str,
    modules: list[str],
    commit: str = "unknown",
    started: dict | None = None,
) -> str:
    """``tests/mutation_summary.md``: the counts per module of a run over every module, at
    ``commit`` (the checkout's commit, with "+changes" when it had uncommitted changes);
    ``started``: the commit and date a run continued from a checkpoint began at."""
    cols = ["killed", "timeout", "survived", EQUIV, "no tests"]
    began = (
        f" (the run began at commit {started['commit']} on {started['date']} and was continued "
        "from a checkpoint of the same code)"
        if started
        else ""
    )
    lines = [
        "# Mutation testing: summary",
        "",
        f"Written by `make mutate` (tests/mutate.py) on {date}, at commit {commit}{began}, with "
        f"mutmut {version}: every "
        "mutant of each module run against the unit tests (`[tool.mutmut]` in pyproject.toml). "
        "*equivalent*: survived, checked by hand to be equivalent (`EQUIVALENT` in "
        "tests/mutate.py); *other*: segfault, suspicious, skipped; *must-kill left*: mutants of "
        "a `MUST_KILL` function neither killed nor equivalent (0 in a clean run).",
        "",
        "| module | mutants | " + " | ".join(cols) + " | other | must-kill left |",
        "|---|" + "---:|" * (len(cols) + 3),
    ]
    left = collections.Counter(mu.module for mu in rep.must_kill)
    total = collections.Counter()
    for mod in modules:
        c = rep.counts[mod]
        row = [sum(c.values())] + [c[k] for k in cols]
        row += [sum(c.values()) - sum(c[k] for k in cols), left[mod]]
        total.update(dict(enumerate(row)))
        lines.append(f"| {mod.removeprefix('twolayer.')} | " + " | ".join(map(str, row)) + " |")
    lines.append("| **all** | " + " | ".join(str(total[i]) for i in range(len(cols) + 3)) + " |")
    lines += [
        "",
        f"Listed as equivalent, yet killed: {len(rep.killed_equivalent)} (0 in a clean run: a "
        "kill of one would mean a wrong reason, or a test that fails for a cause other than the "
        "mutant, which would make every kill suspect).",
    ]
    return "\n".join(lines) + "\n"


def write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def patterns(modules: list[str]) -> list[str]:
    out = []
    for mod in modules:
        if mod in FUNCTIONS:
            out += [f"{mod}.x_{f}__mutmut_*" for f in FUNCTIONS[mod]]
        else:
            out.append(f"{mod}.*")
    return out


def stage() -> Path:
    """mutmut names a mutant after its file's path, dropping only a leading ``src.``, and puts
    only ``mutants/``, ``mutants/src`` and ``mutants/source`` on ``sys.path``: so it runs in a
    copy of the project where ``lib/`` is ``src/`` (with ``lib/`` the tests would import the
    unmutated ``twolayer`` of the editable install and every mutant would look untested)."""
    WORK.mkdir(exist_ok=True)
    # a fresh copy of the code and the tests: a module the checkout no longer has (moved or
    # deleted) must not linger in the copy, nor in mutmut's own ``mutants/``, where the tests
    # would still import it
    for name in ("src", "tests"):
        shutil.rmtree(WORK / name, ignore_errors=True)
    kept = WORK / "mutants" / "src"
    if kept.is_dir():
        for path in kept.rglob("*.py"):
            if not (ROOT / "lib" / path.relative_to(kept)).exists():
                path.unlink()
    shutil.copytree(ROOT / "lib", WORK / "src", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tests", WORK / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    # what the tests read beside the code (``also_copy`` puts it in ``mutants/``, where
    # helpers.ROOT and io.repository_root find the checkout)
    for name in ("notebooks", "book"):
        shutil.copytree(ROOT / name, WORK / name, dirs_exist_ok=True)
    for name in ("_toc.yml", "_config.yml"):
        shutil.copy2(ROOT / name, WORK / name)
    text = (ROOT / "pyproject.toml").read_text()
    head, _, tail = text.partition("[tool.mutmut]")
    tail = tail.replace('"lib/twolayer', '"src/twolayer').replace('["lib"]', '["src"]')
    (WORK / "pyproject.toml").write_text(head + "[tool.mutmut]" + tail)
    return WORK


def results(work: Path, env: dict) -> dict[str, str]:
    """The status of every mutant mutmut has in ``work`` (``mutmut results --all true``)."""
    res = subprocess.run(
        [sys.executable, "-m", "mutmut", "results", "--all", "true"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return parse_results(res.stdout)


# what a stopped run leaves: never run, or stopped while running
UNFINISHED = ("not checked", "check was interrupted by user")


def _named(status: dict[str, str], pats: list[str], keep) -> list[str]:
    """The mutants matching ``pats`` whose ``keep(name, status)`` holds, sorted by name
    (mutmut runs every mutant of a pattern it is given again, so a partial run names them
    one by one)."""
    return sorted(
        n
        for n, st in status.items()
        if keep(n, st) and any(fnmatch.fnmatchcase(n, p) for p in pats)
    )


def unfinished(status: dict[str, str], pats: list[str]) -> list[str]:
    """The mutants matching ``pats`` that a stopped run left without a result. A resumed run is
    the same run only with the same code and tests."""
    return _named(status, pats, lambda n, st: st in UNFINISHED)


def must_kill_survivors(status: dict[str, str], pats: list[str]) -> list[str]:
    """The mutants matching ``pats`` of ``MUST_KILL`` functions that survived or that no test
    reached: after tests are added, these alone need to run again (mutmut keeps the other
    results; listed equivalents are run again too, and stay survivors)."""

    def keep(name: str, st: str) -> bool:
        module, function = function_of(name)
        return st in ("survived", "no tests") and function in MUST_KILL.get(module, ())

    return _named(status, pats, keep)


def timeouts(status: dict[str, str], pats: list[str]) -> list[str]:
    """The mutants matching ``pats`` that timed out. mutmut stops a mutant's tests after 15 times
    (their measured time + 1 s) of wall-clock time and counts that as a kill; on a loaded machine
    (or just after mutmut measured the tests again) a mutant that would survive can get there,
    so each is run once more before the report, and its second result counts."""
    return _named(status, pats, lambda n, st: st == "timeout")


def check_static(mutants: dict[str, Mutant], modules: list[str]) -> int:
    """Print the stale ``EQUIVALENT`` keys and unknown ``MUST_KILL`` names; their number."""
    bad = 0
    for k in stale_keys(mutants, modules):
        bad += 1
        print(f"STALE equivalent (matches no mutant): {k[0]} / {k[1]}: {k[2]!r} -> {k[3]!r}")
    for name in unknown_must_kill(mutants, modules):
        bad += 1
        print(f"MUST_KILL names a function without mutants: {name}")
    return bad


def git(*args: str) -> str:
    """``git ARGS`` in the checkout: its output, stripped."""
    out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def checkout_commit() -> str:
    """The checkout's commit (``+changes`` if the working tree differs from it), for the
    summary; ``unknown`` outside a Git checkout."""

    try:
        head = git("rev-parse", "--short=12", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+changes" if dirty else "")


def mutmut_version() -> str:
    """The installed mutmut's version (``make mutate`` pins it), for the summary."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mutmut")
    except PackageNotFoundError:
        return "not installed"


# what a mutant's result depends on beside the tests: the code mutated, mutmut's settings (and
# the rest of pyproject.toml), the packages
CODE = ("lib", "pyproject.toml", "requirements.lock")


def code_hashes() -> dict[str, str]:
    """Git's hash of each path of ``CODE`` at the checkout's commit. Stops the run if one of them
    has uncommitted changes (a checkpoint names committed code only)."""

    dirty = git("status", "--porcelain", "--", *CODE)
    if dirty:
        raise SystemExit(f"uncommitted changes in {' '.join(CODE)}; commit them first:\n{dirty}")
    return {path: git("rev-parse", f"HEAD:{path}") for path in CODE}


def checkpoint_data(
    status: dict[str, str], code: dict[str, str], version: str, started: dict, written: dict
) -> dict:
    """The content of ``tests/mutation_checkpoint.json``: the finished results of ``status``
    (``parse_results``), per function the mutant numbers of each status."""
    results: dict[str, dict[str, list[int]]] = {}
    for name, st in sorted(status.items(), key=lambda kv: _order(kv[0])):
        if st in UNFINISHED:
            continue
        head, _, k = name.rpartition("__mutmut_")
        results.setdefault(head, {}).setdefault(st, []).append(int(k))
    return {
        "about": "the results of a `make mutate` run done in parts (tests/mutate.py, --resume)",
        "started": started,
        "written": written,
        "mutmut": version,
        "code": code,
        "results": results,
    }


def checkpoint_status(data: dict) -> dict[str, str]:
    """The inverse of ``checkpoint_data``: mutant name -> status."""
    return {
        f"{head}__mutmut_{k}": st
        for head, by_status in data["results"].items()
        for st, ks in by_status.items()
        for k in ks
    }


def checkpoint_text(data: dict) -> str:
    """``checkpoint_data`` as JSON, one function's results a line."""
    head = json.dumps({k: v for k, v in data.items() if k != "results"}, indent=1)
    rows = ",\n".join(
        f"  {json.dumps(h, ensure_ascii=False)}: {json.dumps(r)}"
        for h, r in data["results"].items()
    )
    return head[:-2] + ',\n "results": {\n' + rows + "\n }\n}\n"


def load_checkpoint(path: Path, code: dict[str, str], version: str) -> dict | None:
    """The checkpoint at ``path`` (None if there is none). Stops the run if it was written for
    other code or another mutmut, naming what differs."""
    if not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    changed = [p for p in CODE if data["code"].get(p) != code[p]]
    if data["mutmut"] != version:
        changed.append(f"mutmut {data['mutmut']} -> {version}")
    if changed:
        raise SystemExit(
            f"{path.name} was written at commit {data['written']['commit']} for other code "
            f"({', '.join(changed)} changed): its results do not hold here. Delete it and run "
            "in full, or check out that code."
        )
    return data


def merged(checkpoint: dict | None, status: dict[str, str]) -> dict[str, str]:
    """The results of the checkpoint, overridden by those ``status`` has finished."""
    out = checkpoint_status(checkpoint) if checkpoint else {}
    out.update({n: st for n, st in status.items() if st not in UNFINISHED})
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("modules", nargs="*", help=f"short names: {' '.join(MODULES)}")
    ap.add_argument("--max-children", type=int, help="mutmut's worker processes")
    ap.add_argument("--list", action="store_true", help="generate the mutants only")
    ap.add_argument("--keys", metavar="PATTERN", help="print the entries of matching mutants")
    again = ap.add_mutually_exclusive_group()
    again.add_argument(
        "--resume",
        action="store_true",
        help="run only the mutants of the last run (.mutmut/) that have no result, then report",
    )
    again.add_argument(
        "--recheck",
        action="store_true",
        help="run again the last run's must-kill survivors (after tests were added), then report",
    )
    again.add_argument(
        "--checkpoint",
        action="store_true",
        help=f"save the last run's results in {CHECKPOINT.name} for a later --resume; runs nothing",
    )
    args = ap.parse_args(argv)
    unknown = [n for n in args.modules if n not in MODULES]
    if unknown:
        print(f"unknown modules {unknown}; choose from {list(MODULES)}", file=sys.stderr)
        return 2
    names = args.modules or list(MODULES)
    modules = [MODULES[n] for n in names]

    if args.list or args.keys:
        mutants = generate(modules)
        if args.keys:
            for name, mu in sorted(mutants.items(), key=lambda kv: _order(kv[0])):
                if fnmatch.fnmatchcase(name, args.keys):
                    tag = " (listed)" if mu.key in EQUIVALENT else ""
                    print(f"# {name}{tag}\n{entry(mu, EQUIVALENT.get(mu.key, 'WHY'))}")
            return 0
        for mod in modules:
            ms = [mu for mu in mutants.values() if mu.module == mod]
            must = sum(mu.function in MUST_KILL.get(mod, ()) for mu in ms)
            eq = sum(mu.key in EQUIVALENT for mu in ms)
            print(
                f"{mod}: {len(ms)} mutants, {must} in must-kill functions, {eq} listed equivalent"
            )
        print(f"all: {len(mutants)} mutants")
        return 1 if check_static(mutants, modules) else 0

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    full = set(modules) == set(MODULES.values())
    today = datetime.date.today().isoformat()
    checkpoint = None
    if args.checkpoint or ((args.resume or args.recheck) and CHECKPOINT.exists()):
        if not full:
            print("a checkpoint holds a run over every module: name no module", file=sys.stderr)
            return 2
        code, version = code_hashes(), mutmut_version()
        checkpoint = load_checkpoint(CHECKPOINT, code, version)
    if args.checkpoint:
        status = merged(checkpoint, results(WORK, env))
        stamp = {"commit": checkout_commit(), "date": today}
        started = checkpoint["started"] if checkpoint else stamp
        data = checkpoint_data(status, code, version, started, stamp)
        write_atomically(CHECKPOINT, checkpoint_text(data))
        print(f"wrote {CHECKPOINT}: the results of {len(status)} mutants")
        return 0

    work = stage()
    extra = ["--max-children", str(args.max_children)] if args.max_children else []
    todo = patterns(modules)
    # the diffs of what mutmut runs: its copy of the sources, through its own generator
    mutants = generate(modules, work, "src")
    if args.resume:
        # every mutant of the code, so that a checkout where mutmut never ran resumes too
        done = merged(checkpoint, results(work, env))
        todo = unfinished({n: done.get(n, "not checked") for n in mutants}, todo)
        print(f"resuming: {len(todo)} mutants without a result")
    elif args.recheck:
        todo = must_kill_survivors(merged(checkpoint, results(work, env)), todo)
        print(f"rechecking: {len(todo)} surviving mutants of must-kill functions")

    def run(names: list[str]) -> None:
        cmd = [sys.executable, "-m", "mutmut", "run", *extra, *names]
        subprocess.run(cmd, cwd=work, env=env, check=False)

    if todo:
        run(todo)
    status = merged(checkpoint, results(work, env))
    again = timeouts(status, patterns(modules))
    if again:
        print(f"running the {len(again)} timeouts again: a timeout counts only if it repeats")
        run(again)
        status = merged(checkpoint, results(work, env))
    missing = [n for n in status if function_of(n)[0] in modules and n not in mutants]
    missing = [n for n in missing if in_scope(*function_of(n))]
    if missing:
        print(f"{len(missing)} mutants of mutmut's run not generated here, e.g. {missing[:3]}")
    rep = account(mutants, status, modules)
    for mod in modules:
        c = rep.counts[mod]
        print(
            f"{mod}: {sum(c.values())} mutants, "
            + ", ".join(f"{v} {k}" for k, v in sorted(c.items()))
        )
    for mu in rep.survivors:
        print(f"   survived ({status.get(mu.name)}): {show(mu)}")
    for mu in rep.must_kill:
        print(f"   MUST KILL, {status.get(mu.name, 'not checked')}: {show(mu)}")
    for mu in rep.killed_equivalent:
        print(f"   listed as equivalent but killed (a wrong reason, or a flaky test): {show(mu)}")
    # a listed equivalent that was killed: its reason is wrong, or a test failed for a cause
    # other than the mutant (a flaky test, or state one session left to the next), which
    # would make any kill of the run suspect
    bad = check_static(mutants, modules) + len(rep.must_kill) + len(rep.killed_equivalent)
    bad += bool(missing)
    if full and not rep.unchecked:
        started = checkpoint["started"] if checkpoint else None
        text = summary_text(rep, today, mutmut_version(), modules, checkout_commit(), started)
        write_atomically(SUMMARY, text)
        print(f"wrote {SUMMARY}")
        if CHECKPOINT.exists():
            CHECKPOINT.unlink()
            print(f"removed {CHECKPOINT}: the run it held is complete")
    elif full:
        print(f"{rep.unchecked} mutants have no result: --checkpoint saves the others")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
