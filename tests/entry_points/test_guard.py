"""The network guard itself (tests/guards/sitecustomize.py and network_plugin.py, whose hooks
both conftest.py files import).

Connections to non-loopback addresses and DNS lookups of non-local names are refused and
logged, in this process and in every process it starts; a test during which an attempt was
logged fails; and an attempt that no test can be blamed for (here: at collection time in an
xdist worker) still fails the session through the controller.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap

import pytest

from helpers import GUARDS, ROOT

ATTEMPTS = {
    "connect": "socket.create_connection(('192.0.2.1', 9), timeout=1)",
    "connect_ex": "socket.socket().connect_ex(('198.51.100.7', 80))",
    "getaddrinfo": "socket.getaddrinfo('example.com', 443)",
    "gethostbyname": "socket.gethostbyname('pypi.org')",
    "udp": "socket.socket(socket.AF_INET, socket.SOCK_DGRAM).connect(('8.8.8.8', 53))",
    "reverse": "socket.gethostbyaddr('203.0.113.9')",
}


def _guarded_python(code, log):
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(GUARDS),
        "TWOLAYER_NETWORK_LOG": str(log),
    }
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )


@pytest.mark.parametrize("kind", list(ATTEMPTS))
def test_child_process_attempt_is_blocked_and_logged(tmp_path, kind):
    log = tmp_path / "net.log"
    code = f"import socket\ntry:\n    {ATTEMPTS[kind]}\nexcept OSError:\n    print('blocked')\n"
    out = _guarded_python(code, log)
    assert out.stdout.strip() == "blocked", out.stdout + out.stderr
    text = log.read_text()
    assert len(text.splitlines()) == 1, text
    assert any(
        h in text
        for h in ("192.0.2.1", "198.51.100.7", "example.com", "pypi.org", "8.8.8.8", "203.0.113.9")
    ), text


def test_loopback_and_local_names_stay_allowed(tmp_path):
    """Dask, Jupyter kernels and the browser test talk over 127.0.0.1 and localhost."""
    log = tmp_path / "net.log"
    code = (
        "import socket\ns = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
        "c = socket.create_connection(s.getsockname()); c.close()\n"
        "socket.getaddrinfo('localhost', 80); socket.getaddrinfo('127.0.0.1', 80)\n"
        "socket.getaddrinfo(None, 0); socket.gethostbyname('localhost')\n"
        "socket.getfqdn(); socket.gethostbyaddr('127.0.0.1')\n"
        "print('ok')\n"
    )
    out = _guarded_python(code, log)
    assert out.stdout.strip() == "ok", out.stderr
    assert not log.exists() or not log.read_text()


def test_guard_is_active_in_the_test_process(tmp_path, monkeypatch):
    # the deliberate attempt goes to a log of its own: the session's log is left untouched
    import network_plugin

    own = tmp_path / "deliberate.log"
    before = network_plugin.NETWORK_LOG.read_text() if network_plugin.NETWORK_LOG.exists() else ""
    monkeypatch.setenv("TWOLAYER_NETWORK_LOG", str(own))
    with pytest.raises(OSError, match="network access blocked"):
        socket.create_connection(("192.0.2.1", 9), timeout=1)
    with pytest.raises(socket.gaierror):
        socket.getaddrinfo("example.org", 80)
    # UDP names its address per datagram: sendto and sendmsg are guarded too; loopback is not
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        with pytest.raises(OSError, match="network access blocked"):
            udp.sendto(b"x", ("192.0.2.1", 9))
        with pytest.raises(OSError, match="network access blocked"):
            udp.sendmsg([b"x"], [], 0, ("192.0.2.1", 9))
        assert udp.sendto(b"x", ("127.0.0.1", 9)) == 1
    assert len(own.read_text().splitlines()) == 4
    after = network_plugin.NETWORK_LOG.read_text() if network_plugin.NETWORK_LOG.exists() else ""
    assert after == before


def test_kernels_and_workers_inherit_the_guard():
    """Every process the tests start finds the guard first on PYTHONPATH."""
    assert os.environ["PYTHONPATH"].split(os.pathsep)[0] == str(GUARDS)
    assert os.environ["TWOLAYER_NETWORK_LOG"]
    out = subprocess.run(
        [sys.executable, "-c", "import socket; print(socket._twolayer_guarded)"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.stdout.strip() == "True", out.stderr


PROBE = """
import os, socket, subprocess, sys

if os.environ.get("PROBE_AT_COLLECTION"):
    try:  # in every xdist worker, outside every test: the controller must fail the session
        socket.getaddrinfo("collection-time.example", 80)
    except OSError:
        pass


def test_passes():
    assert True


def test_child_attempt():
    if os.environ.get("PROBE_IN_TEST"):
        subprocess.run([sys.executable, "-c",
                        "import socket\\ntry:\\n    socket.gethostbyname('child.example')\\n"
                        "except OSError:\\n    pass"], check=True)
"""


def _outer_session_env() -> dict:
    """This process's environment without its session's guard and pytest variables, with the
    suite's conftest importable: a pytest started with it is a session of its own."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TWOLAYER_NETWORK", "PYTEST_", "COV_"))
    }
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests"), env.get("PYTHONPATH", "")])
    return env


def _nested_xdist_session(tmp_path, **flags):
    (tmp_path / "test_probe.py").write_text(textwrap.dedent(PROBE))
    env = _outer_session_env()
    env.update({k: "1" for k in flags})
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "conftest",
            "-n",
            "1",
            "-q",
            "-o",
            "addopts=",
            "--rootdir",
            str(tmp_path),
            "-p",
            "no:cacheprovider",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    return out.returncode, out.stdout + out.stderr


@pytest.mark.slow
def test_attempt_in_a_test_fails_that_test_under_xdist(tmp_path):
    rc, text = _nested_xdist_session(tmp_path, PROBE_IN_TEST=1)
    assert rc == 1 and "1 failed, 1 passed" in text, text
    assert "FAILED test_probe.py::test_child_attempt" in text and "child.example" in text, text


@pytest.mark.slow
def test_attempt_outside_every_test_fails_the_session_under_xdist(tmp_path):
    """Every test passes, yet the controller fails the session: an xdist worker tried a DNS
    lookup at collection time, where no test can be blamed."""
    rc, text = _nested_xdist_session(tmp_path, PROBE_AT_COLLECTION=1)
    assert "2 passed" in text and "failed" not in text, text
    assert rc == 1 and "collection-time.example" in text, text


FORKED_SESSIONS = """
import os, pytest

ARGS = ["-p", "conftest", "-q", "-o", "addopts=", "--rootdir", ".", "-p", "no:cacheprovider"]
pytest.main(["--collect-only", "-qqq", *ARGS, "."])  # the server: imports the conftest once


def session(test, probe):  # one mutant's session, forked from the server
    pid = os.fork()
    if pid == 0:
        if probe:
            os.environ["PROBE_IN_TEST"] = "1"
        os._exit(int(pytest.main([*ARGS, "-x", "test_probe.py::" + test])))
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


print("exit statuses", session("test_child_attempt", True), session("test_passes", False))
"""


def test_sessions_forked_from_one_server_keep_separate_logs(tmp_path):
    """mutmut's forkserver: the conftest is imported once, then every mutant's session runs in
    a forked child. A session whose test tried the network fails; the next session, with a test
    that passes, must pass, not inherit the first one's log (it did: every mutant after one
    that reached for the network counted as killed)."""
    (tmp_path / "test_probe.py").write_text(textwrap.dedent(PROBE))
    (tmp_path / "server.py").write_text(FORKED_SESSIONS)
    env = _outer_session_env()
    out = subprocess.run(
        [sys.executable, "server.py"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    text = out.stdout + out.stderr
    assert "child.example" in text, text  # the first session's attempt was logged and blamed
    assert out.returncode == 0 and "exit statuses 1 0" in text, text
