"""Loaded by every Python process started with this folder on PYTHONPATH (the tests do so for
the book build, papermill kernels and Dask workers).

* ``TWOLAYER_NETWORK_LOG``: any socket connection to a non-loopback address is refused and
  recorded in that file, so a test can assert that nothing reached the network.
* ``TWOLAYER_ENOSPC_ONCE``: the first ``os.replace`` onto a file named ``results.json`` fails
  with ``ENOSPC`` (a full disk), once per marker file named by the variable.
"""
import errno
import ipaddress
import os
import socket

_log = os.environ.get("TWOLAYER_NETWORK_LOG")
if _log:
    _connect = socket.socket.connect
    _connect_ex = socket.socket.connect_ex

    def _is_local(address):
        if isinstance(address, (str, bytes)):  # AF_UNIX
            return True
        host = address[0]
        if host in ("localhost", ""):
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False

    def _guard(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(address):
            with open(_log, "a") as fh:
                fh.write(f"{os.getpid()} {address!r}\n")
            raise OSError(errno.ENETUNREACH, f"network access blocked by the tests: {address!r}")

    def connect(self, address):
        _guard(self, address)
        return _connect(self, address)

    def connect_ex(self, address):
        _guard(self, address)
        return _connect_ex(self, address)

    socket.socket.connect = connect
    socket.socket.connect_ex = connect_ex

_marker = os.environ.get("TWOLAYER_ENOSPC_ONCE")
if _marker:
    _replace = os.replace

    def replace(src, dst, *args, **kwargs):
        if os.fspath(dst).endswith("results.json"):
            try:
                fd = os.open(_marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                pass
            else:
                os.close(fd)
                raise OSError(errno.ENOSPC, "No space left on device (simulated)", os.fspath(dst))
        return _replace(src, dst, *args, **kwargs)

    os.replace = replace
