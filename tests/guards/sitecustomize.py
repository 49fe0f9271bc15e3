"""Loaded by every Python process started with this folder on PYTHONPATH (the tests put it
there for the pytest process, xdist workers, the book build, papermill kernels and Dask workers).

* ``TWOLAYER_NETWORK_LOG``: any socket connection or datagram (``sendto``, ``sendmsg``) to
  a non-loopback address, and any DNS lookup of a name other than ``localhost`` or this
  machine's (``getaddrinfo``, ``gethostbyname(_ex)``, ``gethostbyaddr`` of another
  address), is refused and recorded in that file (the file named by the variable *at the time of the
  attempt*, so a test can send a deliberate attempt to a log of its own), so the session can
  fail when anything tried to reach the network.
* ``TWOLAYER_ENOSPC_ONCE``: the first ``os.replace`` onto a file named ``results.json`` fails
  with ``ENOSPC`` (a full disk), once per marker file named by the variable.
"""

import errno
import ipaddress
import os
import socket

_LOG_VAR = "TWOLAYER_NETWORK_LOG"
_log_at_start = os.environ.get(_LOG_VAR)
_LOCAL_NAMES = {
    "",
    "localhost",
    "localhost.localdomain",
    "ip6-localhost",
    "ip6-loopback",
    socket.gethostname().lower(),
}  # this machine's own name (/etc/hosts)

if _log_at_start and not getattr(socket, "_twolayer_guarded", False):
    socket._twolayer_guarded = True
    _connect = socket.socket.connect
    _connect_ex = socket.socket.connect_ex
    _getaddrinfo = socket.getaddrinfo
    _gethostbyname = socket.gethostbyname
    _gethostbyname_ex = socket.gethostbyname_ex
    _gethostbyaddr = socket.gethostbyaddr

    def _record(what):
        path = os.environ.get(_LOG_VAR) or _log_at_start
        try:
            with open(path, "a") as fh:
                fh.write(f"{os.getpid()} {what}\n")
        except OSError:
            pass
        return OSError(errno.ENETUNREACH, f"network access blocked by the tests: {what}")

    def _local_host(host) -> bool:
        if host is None:
            return True
        if isinstance(host, bytes):
            host = host.decode("ascii", "replace")
        host = str(host).strip("[]").split("%")[0]
        if host.lower() in _LOCAL_NAMES:
            return True
        try:
            addr = ipaddress.ip_address(host)
        except ValueError:
            return False  # a name: resolving it would be a DNS lookup
        return addr.is_loopback or addr.is_unspecified

    def _numeric(host) -> bool:
        if host is None:
            return True
        if isinstance(host, bytes):
            host = host.decode("ascii", "replace")
        try:
            ipaddress.ip_address(str(host).strip("[]").split("%")[0])
            return True
        except ValueError:
            return False

    def _guard(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            host = address[0] if isinstance(address, tuple) else address
            if not _local_host(host):
                raise _record(f"connect {address!r}")

    def connect(self, address):
        _guard(self, address)
        return _connect(self, address)

    # datagrams name their address per call, without a connect (UDP: DNS, NTP, telemetry)
    _sendto = socket.socket.sendto
    _sendmsg = socket.socket.sendmsg

    def sendto(self, data, *args):
        address = args[-1] if args else None
        if address is not None:
            _guard(self, address)
        return _sendto(self, data, *args)

    def sendmsg(self, buffers, ancdata=(), flags=0, address=None):
        if address is not None:
            _guard(self, address)
            return _sendmsg(self, buffers, ancdata, flags, address)
        return _sendmsg(self, buffers, ancdata, flags)

    def connect_ex(self, address):
        _guard(self, address)
        return _connect_ex(self, address)

    def getaddrinfo(host, *args, **kwargs):
        # a numeric address needs no lookup (connecting to it is guarded above)
        if not (_local_host(host) or _numeric(host)):
            raise socket.gaierror(socket.EAI_NONAME, str(_record(f"getaddrinfo {host!r}")))
        return _getaddrinfo(host, *args, **kwargs)

    def gethostbyname(host):
        if not (_local_host(host) or _numeric(host)):
            raise socket.gaierror(socket.EAI_NONAME, str(_record(f"gethostbyname {host!r}")))
        return _gethostbyname(host)

    def gethostbyname_ex(host):
        if not (_local_host(host) or _numeric(host)):
            raise socket.gaierror(socket.EAI_NONAME, str(_record(f"gethostbyname_ex {host!r}")))
        return _gethostbyname_ex(host)

    def gethostbyaddr(host):
        # a reverse lookup asks a DNS server too, unless it is about this machine
        if not _local_host(host):
            raise socket.herror(1, str(_record(f"gethostbyaddr {host!r}")))
        return _gethostbyaddr(host)

    socket.socket.connect = connect
    socket.socket.connect_ex = connect_ex
    socket.socket.sendto = sendto
    socket.socket.sendmsg = sendmsg
    socket.getaddrinfo = getaddrinfo
    socket.gethostbyname = gethostbyname
    socket.gethostbyname_ex = gethostbyname_ex
    socket.gethostbyaddr = gethostbyaddr

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
