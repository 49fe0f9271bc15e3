"""Device and dtype selection: CUDA when present, CPU otherwise; nothing assumes a GPU."""
from __future__ import annotations

import torch

_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def default_device(prefer: str | None = None) -> torch.device:
    """``prefer`` ("cpu", "cuda", "cuda:1", ...) if given, else CUDA when available, else CPU."""
    if prefer:
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
