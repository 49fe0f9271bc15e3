"""The GitHub Actions workflows (.github/workflows): ``actionlint`` when it is on PATH, and
always a schema check in Python: every workflow has triggers and jobs, every job a runner and
steps, every action is pinned to a version tag; the test job runs exactly the README's test
command on every push and pull request with the locked environment cached; on ``main`` the
pages job builds the site in the ``book`` profile from the cached executed notebooks and
deploys it with the official Pages actions; a weekly job runs ``make test-latest``."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
import yaml

from helpers import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.y*ml"))
PINNED = re.compile(r"^[\w.-]+/[\w./-]+@v\d+(\.\d+){0,2}$")


def readme_test_command() -> str:
    """The README's test command: the ``make test`` line of "The two commands"."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("## The two commands", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    (line,) = [ln for ln in block.splitlines() if ln.startswith("make test")]
    return line.split("#", 1)[0].strip()


def load(path) -> dict:
    wf = yaml.safe_load(path.read_text(encoding="utf-8"))
    if True in wf and "on" not in wf:  # YAML 1.1 reads the key `on` as True
        wf["on"] = wf.pop(True)
    return wf


def triggers(wf: dict) -> set[str]:
    on = wf["on"]
    return {on} if isinstance(on, str) else set(on)


def steps(job: dict) -> list[dict]:
    return job.get("steps", [])


def uses(job: dict, action: str) -> list[dict]:
    return [s for s in steps(job) if s.get("uses", "").split("@")[0] == action]


def runs(job: dict) -> list[str]:
    return [s["run"].strip() for s in steps(job) if "run" in s]


def schema_errors(wf: dict, name: str = "workflow") -> list[str]:
    """What a workflow lacks, as a list of messages (empty: it passes)."""
    errors = []
    if not wf.get("on"):
        errors.append(f"{name}: no `on` (triggers)")
    if not isinstance(wf.get("jobs"), dict) or not wf["jobs"]:
        return errors + [f"{name}: no `jobs`"]
    for jid, job in wf["jobs"].items():
        if not isinstance(job, dict):
            errors.append(f"{name}: job {jid} is not a mapping")
            continue
        if not job.get("runs-on"):
            errors.append(f"{name}: job {jid} has no `runs-on`")
        if not isinstance(job.get("steps"), list) or not job["steps"]:
            errors.append(f"{name}: job {jid} has no `steps`")
            continue
        for i, step in enumerate(job["steps"]):
            if not isinstance(step, dict) or not ({"uses", "run"} & set(step)):
                errors.append(f"{name}: job {jid} step {i} has neither `uses` nor `run`")
            elif "uses" in step and not PINNED.match(step["uses"]):
                errors.append(
                    f"{name}: job {jid} step {i}: `uses: {step['uses']}` is not pinned to a "
                    "version tag (owner/action@vN)"
                )
    return errors


def all_jobs():
    return {(p.name, jid): job for p in WORKFLOWS for jid, job in load(p)["jobs"].items()}


def test_there_are_workflows():
    assert len(WORKFLOWS) >= 2, [p.name for p in WORKFLOWS]


@pytest.mark.parametrize("path", WORKFLOWS, ids=[p.name for p in WORKFLOWS])
def test_schema(path):
    assert schema_errors(load(path), path.name) == []


def test_schema_check_catches_a_broken_workflow():
    """The check is not vacuous: an unpinned action, a job without a runner or steps, and a
    workflow without triggers are each reported."""
    bad = {
        "jobs": {
            "a": {"runs-on": "ubuntu-latest", "steps": [{"uses": "actions/checkout@main"}]},
            "b": {"steps": [{"run": "make test"}]},
            "c": {"runs-on": "ubuntu-latest"},
        }
    }
    errors = "\n".join(schema_errors(bad))
    assert "no `on`" in errors and "actions/checkout@main" in errors
    assert "job b has no `runs-on`" in errors and "job c has no `steps`" in errors


def _test_job():
    found = [
        (wf, j)
        for (wf, _), j in all_jobs().items()
        if readme_test_command() in runs(j) and "needs" not in j
    ]
    assert len(found) == 1, "exactly one job runs the README's test command"
    return found[0]


def test_test_job_runs_the_readme_command_on_every_push_and_pull_request():
    assert readme_test_command() == "make test"
    wf_name, job = _test_job()
    wf = load(ROOT / ".github" / "workflows" / wf_name)
    assert {"push", "pull_request"} <= triggers(wf)
    on = wf["on"]
    for event in ("push", "pull_request"):  # no branch or path filter: every one
        assert not (isinstance(on, dict) and on.get(event)), f"{event} is filtered"
    assert "if" not in job
    assert runs(job)[-1] == "make test", "the last step is the README's test command, as is"


@pytest.mark.parametrize("job_kind", ["test", "pages"])
def test_locked_environment_is_cached(job_kind):
    job = _test_job()[1] if job_kind == "test" else _pages_job()
    caches = uses(job, "actions/cache")
    venv = [c for c in caches if ".venv" in c["with"]["path"].split()]
    assert venv, "cache .venv"
    (c,) = venv
    assert "~/.cache/pip" in c["with"]["path"].split(), "cache pip's downloads too"
    key = c["with"]["key"]
    assert "hashFiles(" in key and "requirements.lock" in key and "pyproject.toml" in key


def _pages_job():
    found = [j for j in all_jobs().values() if uses(j, "actions/deploy-pages")]
    assert len(found) == 1, "exactly one job deploys to GitHub Pages"
    return found[0]


def test_pages_job_builds_the_book_profile_and_deploys_with_the_official_actions():
    job = _pages_job()
    assert "refs/heads/main" in job.get("if", "") and "push" in job["if"]
    assert job.get("needs") == "test" or "test" in job.get("needs", [])
    perms = job["permissions"]
    assert perms["pages"] == "write" and perms["id-token"] == "write"
    assert job["environment"]["name"] == "github-pages"
    assert "steps.deployment.outputs.page_url" in job["environment"]["url"]
    assert uses(job, "actions/configure-pages")
    (art,) = uses(job, "actions/upload-pages-artifact")
    assert art["with"]["path"] == "_build/html"
    (deploy,) = uses(job, "actions/deploy-pages")
    assert deploy.get("id") == "deployment"
    build = [s for s in steps(job) if s.get("run", "").strip() == "make book"]
    assert len(build) == 1
    assert build[0].get("env", {}).get("BOOK_PROFILE", "book") == "book"
    names = [s.get("uses", s.get("run", "")).strip() for s in steps(job)]
    assert names.index("make book") < names.index(art["uses"]) < names.index(deploy["uses"])
    # the executed notebooks of the last build: restored before `make book`, saved after
    (jc,) = [c for c in uses(job, "actions/cache") if "_build/.jupyter_cache" in c["with"]["path"]]
    assert "github.sha" in jc["with"]["key"] and jc["with"]["restore-keys"].strip()
    assert names.index(jc["uses"]) < names.index("make book")


def test_weekly_job_runs_test_latest():
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^test-latest:", makefile, flags=re.M)
    found = []
    for p in WORKFLOWS:
        wf = load(p)
        if "schedule" not in triggers(wf):
            continue
        crons = [s["cron"] for s in wf["on"]["schedule"]]
        assert all(len(c.split()) == 5 and c.split()[2:4] == ["*", "*"] for c in crons), crons
        assert all(c.split()[4] != "*" for c in crons), "weekly: one day of the week"
        found += [j for j in wf["jobs"].values() if "make test-latest" in runs(j)]
    assert len(found) == 1


def test_actionlint():
    """``actionlint`` over every workflow, where it is installed (the schema check above runs
    everywhere)."""
    exe = shutil.which("actionlint")
    if exe is None:
        pytest.skip("actionlint is not on PATH (the schema checks ran instead)")
    proc = subprocess.run(
        [exe, *map(str, WORKFLOWS)], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
