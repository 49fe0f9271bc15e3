"""Done-when of the Paper B issue: Stage 3 with another teacher (other r, m*, seed) ends with
every student neuron either close to a teacher neuron or of negligible norm, and says so in its
results JSON."""
from __future__ import annotations

import json

import papermill as pm

from conftest import ROOT


def test_stage3_with_another_teacher(tmp_path):
    nb = ROOT / "notebooks" / "paper_b" / "stage3.ipynb"
    res = tmp_path / "stage3.json"
    pm.execute_notebook(str(nb), str(tmp_path / "out.ipynb"), cwd=str(nb.parent), progress_bar=False,
                        parameters={"profile": "smoke", "r": 3, "m_star": 4, "seed": 5,
                                    "results_path": str(res)})
    r = json.loads(res.read_text())
    assert r["params"]["r"] == 3 and r["params"]["m_star"] == 4 and r["params"]["seed"] == 5
    m = r["metrics"]
    for key in ("final_loss", "max_angle_surviving", "surviving_threshold", "vanished_mass",
                "teachers_covered"):
        assert key in m, key
    assert m["teachers_covered"] is True
    assert all(r["checks"].values())
