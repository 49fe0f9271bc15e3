"""Device and dtype selection: CUDA when present, CPU otherwise; nothing assumes a GPU.

* :func:`default_device`, :func:`resolve_dtype`: what a chapter's ``device``/``dtype``
  parameters map to (``"auto"`` or ``None`` is CUDA when present);
* :func:`where`: ``{"device", "dtype"}`` of a tensor, for ``contract.where(**where(W))``;
* :class:`DeviceGuard`: a test helper that fails on any host synchronisation or device mix
  inside a block of torch code; with PyTorch's ``meta`` device it tests a GPU program's
  device discipline on a machine without a GPU (see ``tests/paper_a/test_device_discipline.py``).
"""

from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode

_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def default_device(prefer: str | None = None) -> torch.device:
    """``prefer`` ("cpu", "cuda", "cuda:1", ...) if given, else CUDA when available, else CPU
    (``"auto"`` is the same as ``None``)."""
    if prefer and prefer != "auto":
        dev = torch.device(prefer)
        if dev.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"device={prefer!r} was asked for but CUDA is not available here")
        return dev
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def resolve_dtype(dtype: str | torch.dtype) -> torch.dtype:
    """Map ``"float32"``/``"float64"`` (or a torch dtype) to a torch floating dtype."""
    if isinstance(dtype, torch.dtype):
        if dtype not in _DTYPES.values():
            raise ValueError(f"dtype must be float32 or float64, got {dtype}")
        return dtype
    try:
        return _DTYPES[str(dtype)]
    except KeyError:
        raise ValueError(f"dtype must be one of {sorted(_DTYPES)}, got {dtype!r}") from None


def where(x: torch.Tensor) -> dict[str, str]:
    """``{"device": "cuda:0", "dtype": "float32"}`` of a tensor: what a page records with
    ``contract.where(**where(W))``."""
    return {"device": str(x.device), "dtype": str(x.dtype).replace("torch.", "")}


class DeviceGuard(TorchDispatchMode):
    """Inside ``with DeviceGuard(device):`` every torch operator is checked: reading a value to
    the host (``.item()``, ``bool(t)``, ``float(t)``, ``torch.equal``), copying between devices
    (``.cpu()``, ``.to(other)``, a tensor made from host data) or mixing devices in one
    operator raises ``AssertionError``. 0-dim CPU tensors are allowed as operands (CUDA kernels
    take them as scalar arguments without a synchronisation). ``ops`` lists the operators
    seen. Use with ``device="meta"`` to test device discipline without a GPU: meta tensors
    have no data, and the guard also catches the device mixes that meta alone lets through."""

    HOST_READS = frozenset({"_local_scalar_dense", "item", "is_nonzero", "equal"})

    def __init__(self, device: str | torch.device):
        super().__init__()
        self.device = torch.device(device)
        self.ops: list[str] = []

    def _check(self, x, name: str) -> None:
        if isinstance(x, torch.Tensor):
            if x.device != self.device and not (x.dim() == 0 and x.device.type == "cpu"):
                raise AssertionError(f"aten.{name} got a tensor on {x.device}, not {self.device}")
        elif isinstance(x, (list, tuple)):
            for v in x:
                self._check(v, name)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func.overloadpacket.__name__
        self.ops.append(name)
        if name in self.HOST_READS:
            raise AssertionError(f"host read: aten.{name}")
        for v in (*args, *kwargs.values()):
            self._check(v, name)
        dev = kwargs.get("device")
        if dev is not None and torch.device(dev) != self.device:
            raise AssertionError(f"aten.{name} creates a tensor on {dev}, not {self.device}")
        return func(*args, **kwargs)
