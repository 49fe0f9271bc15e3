"""Paper A, Section 3 chapters with parameters other than their defaults (issue 3, "Done when"):
a run with other n, d, m1 != m2, gamma, loss and seed that satisfy the assumption certifies
every item of Theorem 3.2, and out-of-range values stop with a message naming the parameter."""
from __future__ import annotations

import json

import papermill as pm
import pytest

from conftest import ROOT

NB = ROOT / "notebooks" / "paper_a"
METRICS = ("margin_max_dev", "row_collapse", "rank_ratio", "dist_to_convex", "sign_agreement",
           "z_ratio", "z_bound", "lambda_in_range", "t_log2_over_n")


def _run(name, tmp_path, **params):
    out = tmp_path / f"{name}-out.ipynb"
    return pm.execute_notebook(str(NB / f"{name}.ipynb"), str(out), parameters=params,
                               cwd=str(NB), progress_bar=False, kernel_name="python3")


def test_gradient_flow_other_parameters_certify_every_item(tmp_path):
    path = tmp_path / "r.json"
    _run("gradient_flow", tmp_path, profile="smoke", seed=3, n=10, d=25, m1=4, m2=2, gamma=0.7,
         loss="logistic", gap=0.8, results_path=str(path))
    res = json.loads(path.read_text())
    assert res["checks"] and all(res["checks"].values())
    for name in METRICS:
        assert name in res["metrics"], name
    m = res["metrics"]
    assert m["lambda_in_range"] is True and m["z_ratio"] <= m["z_bound"]
    assert m["sign_agreement"] >= 1 - res["params"]["tol"]


@pytest.mark.parametrize("name, params, bad", [
    ("gradient_flow", {"d": 4, "n": 8}, "d"),
    ("gradient_flow", {"loss": "hinge"}, "loss"),
    ("gradient_flow", {"gamma": 0.0}, "gamma"),
    ("gradient_flow", {"gap": 1.5}, "gap"),
    ("kkt_not_max_margin", {"eps_min": 0.3, "eps_max": 0.1}, "eps_max"),
    ("noisy_xor", {"beta": 0.5}, "beta"),
    ("noisy_xor", {"dims": [64, 2]}, "dims"),
])
def test_bad_values_name_the_parameter(tmp_path, name, params, bad):
    with pytest.raises(pm.PapermillExecutionError) as err:
        _run(name, tmp_path, profile="smoke", **params)
    assert err.value.ename == "ParameterError" and repr(bad) in err.value.evalue, err.value.evalue
