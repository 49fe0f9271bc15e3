"""Real image data for Paper A's Figure 2: CIFAR-10 (official binary archive) and a stand-in.

* :func:`load_cifar10` reads the official *binary* distribution ``cifar-10-binary.tar.gz``
  (Krizhevsky 2009): ``cifar-10-batches-bin/data_batch_1.bin`` ...
  ``data_batch_5.bin`` and ``test_batch.bin``, each a sequence of records of 1 label byte
  followed by 3072 pixel bytes (1024 red, 1024 green, 1024 blue, row-major 32 x 32). The archive's
  checksum is verified first (MD5 ``CIFAR10_MD5`` by default, SHA-256 when one is given);
  nothing is ever unpickled (the Python version of the data set is a pickle and is not used).
* :func:`find_cifar10` locates the archive (argument, then ``$CIFAR10_DIR``) and
  :func:`download_cifar10` fetches it, only when asked (``download=True``, e.g. on Colab).
* :func:`load_digits` is the offline stand-in: scikit-learn's bundled 8 x 8 handwritten digits
  (1797 images, shipped inside the package, no download).
* :func:`train_test_split`, :func:`standardize` and :func:`binary_labels` prepare either one.

Errors are explicit: :class:`DatasetUnavailable` (a ``FileNotFoundError``) when the archive is
absent, :class:`ArchiveError` (a ``ValueError``) when it is truncated, corrupt or fails its
checksum.

Chapter: ``paper_a/real_images``.
"""

from __future__ import annotations

import hashlib
import io as _io
import os
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .data import Rows

CIFAR10_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz"
CIFAR10_ARCHIVE = "cifar-10-binary.tar.gz"
CIFAR10_MD5 = "c32a1d4ab5d03f1284b67883e8d87530"  # published with the archive
CIFAR10_ENV = "CIFAR10_DIR"
DEFAULT_CACHE = os.path.join("~", ".cache", "twolayer", "cifar10")  # download=True without a folder
CIFAR10_FOLDER = "cifar-10-batches-bin"
CIFAR10_TRAIN_FILES = tuple(f"data_batch_{i}.bin" for i in range(1, 6))
CIFAR10_TEST_FILE = "test_batch.bin"
CIFAR10_CLASSES = (
    "airplane",
    "automobile",
    "bird",
    "cat",
    "deer",
    "dog",
    "frog",
    "horse",
    "ship",
    "truck",
)
CIFAR10_SHAPE = (3, 32, 32)
RECORD_BYTES = 1 + 3 * 32 * 32  # 3073

# Binary tasks (the logistic loss of Paper A's theory): classes in the positive set get +1.
POSITIVE_CLASSES = {
    "cifar10": (0, 1, 8, 9),  # vehicles (airplane, automobile, ship, truck) vs animals
    "digits": (0, 2, 4, 6, 8),  # even vs odd digits
}


class DatasetUnavailable(FileNotFoundError):
    """The data set's files are not on this machine (and downloading was not asked for)."""


class ArchiveError(ValueError):
    """The archive is truncated, corrupt, not in the official format, or fails its checksum."""


@dataclass
class ImageData(Rows):
    """Images as float rows ``X`` (n x d) with integer class labels ``labels`` (n,)."""

    X: np.ndarray
    labels: np.ndarray
    name: str
    shape: tuple
    classes: tuple
    info: dict = field(default_factory=dict)


@dataclass
class Split:
    """A train/test split (already standardized when it comes from :func:`prepare`)."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    name: str
    num_classes: int
    info: dict = field(default_factory=dict)


# --- checksums and the archive ----------------------------------------------------------------


def file_digest(path: str | os.PathLike, algorithm: str = "md5", chunk: int = 1 << 20) -> str:
    """Hex digest of a file, read in chunks (``md5`` or ``sha256``)."""
    h = hashlib.new(algorithm)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def verify_checksum(
    path: str | os.PathLike, md5: str | None = CIFAR10_MD5, sha256: str | None = None
) -> None:
    """Raise :class:`ArchiveError` unless ``path`` has the given digests (``None``: not checked)."""
    for algorithm, expected in (("md5", md5), ("sha256", sha256)):
        if expected is None:
            continue
        got = file_digest(path, algorithm)
        if got != expected.lower():
            size = os.path.getsize(path)
            raise ArchiveError(
                f"{path} ({size} bytes) fails its {algorithm.upper()} checksum: "
                f"expected {expected}, "
                f"got {got}. The file is truncated, corrupt or not the official {CIFAR10_ARCHIVE}; "
                f"delete it and download it again from {CIFAR10_URL}"
            )


def find_cifar10(data_dir: str | os.PathLike | None = None) -> Path:
    """Path of ``cifar-10-binary.tar.gz`` in ``data_dir`` (or ``$CIFAR10_DIR``); clear error if
    absent.

    ``data_dir`` may also be the archive itself."""
    source = "data_dir"
    if data_dir is None:
        data_dir = os.environ.get(CIFAR10_ENV)
        source = f"${CIFAR10_ENV}"
    if data_dir is None:
        raise DatasetUnavailable(
            f"CIFAR-10 is not available: no data_dir was given and ${CIFAR10_ENV} is not set. "
            f"Put the official binary archive {CIFAR10_ARCHIVE} ({CIFAR10_URL}) in a folder and "
            f"pass data_dir=<folder> (or set ${CIFAR10_ENV}), or pass download=True to fetch it, "
            f"or use dataset='digits', which needs no download"
        )
    p = Path(data_dir).expanduser()
    archive = p if p.is_file() else p / CIFAR10_ARCHIVE
    if not archive.is_file():
        raise DatasetUnavailable(
            f"CIFAR-10 is not available: {archive} does not exist "
            f"({source}={os.fspath(data_dir)!r}). "
            f"Put the official binary archive {CIFAR10_ARCHIVE} there ({CIFAR10_URL}), pass "
            f"download=True to fetch it, or use dataset='digits', which needs no download"
        )
    return archive


def download_cifar10(
    data_dir: str | os.PathLike,
    url: str = CIFAR10_URL,
    md5: str = CIFAR10_MD5,
    sha256: str | None = None,
) -> Path:  # pragma: no cover - needs the network
    """Download the archive into ``data_dir`` (atomically) unless a verified copy is there."""
    import shutil
    import tempfile
    import urllib.request

    folder = Path(data_dir).expanduser()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / CIFAR10_ARCHIVE
    if target.is_file():
        try:
            verify_checksum(target, md5, sha256)
            return target
        except ArchiveError:
            pass  # a partial or corrupt earlier download: fetch it again
    fd, tmp = tempfile.mkstemp(prefix=f".{CIFAR10_ARCHIVE}.", suffix=".part", dir=folder)
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=60) as resp:
            shutil.copyfileobj(resp, out)
        verify_checksum(tmp, md5, sha256)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def parse_records(raw: bytes, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Decode official binary records: ``(pixels uint8 (n, 3072), labels uint8 (n,))``."""
    if len(raw) == 0 or len(raw) % RECORD_BYTES:
        raise ArchiveError(
            f"{name} has {len(raw)} bytes, not a positive multiple of the record size "
            f"{RECORD_BYTES} (1 label byte + 3072 pixel bytes): the file is truncated or corrupt"
        )
    rec = np.frombuffer(raw, dtype=np.uint8).reshape(-1, RECORD_BYTES)
    labels = rec[:, 0].copy()
    if labels.max() >= len(CIFAR10_CLASSES):
        raise ArchiveError(
            f"{name} holds label {int(labels.max())}; CIFAR-10 labels are 0..9 "
            "(the file is corrupt or not in the official binary format)"
        )
    return rec[:, 1:].copy(), labels


def read_cifar10_archive(archive: str | os.PathLike) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Read every batch file of the archive (no checksum here; see :func:`load_cifar10`)."""
    wanted = {f"{CIFAR10_FOLDER}/{f}" for f in (*CIFAR10_TRAIN_FILES, CIFAR10_TEST_FILE)}
    out = {}
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            for member in tar:
                if member.name in wanted and member.isfile():
                    fh = tar.extractfile(member)
                    raw = fh.read() if fh is not None else b""
                    if len(raw) != member.size:
                        raise ArchiveError(f"{member.name} in {archive} is truncated")
                    out[Path(member.name).name] = parse_records(raw, member.name)
            # tarfile stops at the end-of-archive blocks, before gzip's trailer: read the
            # stream to its end so that its CRC-32 is verified (a flipped byte inside the
            # compressed data can otherwise decode silently into other pixels)
            while tar.fileobj.read(1 << 20):
                pass
    except ArchiveError:
        raise
    except (tarfile.TarError, EOFError, OSError, _zlib_error()) as exc:
        raise ArchiveError(
            f"{archive} cannot be read as a gzip-compressed tar archive "
            f"({type(exc).__name__}: {exc}); "
            f"it is truncated or corrupt: delete it and download {CIFAR10_ARCHIVE} again"
        ) from exc
    missing = sorted(Path(w).name for w in wanted if Path(w).name not in out)
    if missing:
        raise ArchiveError(
            f"{archive} lacks {', '.join(missing)} under {CIFAR10_FOLDER}/: it is not "
            f"the official binary distribution {CIFAR10_ARCHIVE}"
        )
    return out


def _zlib_error():
    import zlib

    return zlib.error


def load_cifar10(
    data_dir: str | os.PathLike | None = None,
    download: bool = False,
    md5: str | None = CIFAR10_MD5,
    sha256: str | None = None,
) -> tuple[ImageData, ImageData]:
    """CIFAR-10's official train (50 000) and test (10 000) sets as ``(train, test)``.

    Pixels become floats in ``[0, 255]`` in the archive's channel-major order (d = 3072).
    ``md5``/``sha256`` are the expected digests of the archive (``None`` skips one; tests pass
    the digests of the small archives they write). With ``download=True`` a missing archive is
    fetched into ``data_dir`` (else ``$CIFAR10_DIR``, else ``DEFAULT_CACHE``) first.
    """
    if download:
        folder = data_dir if data_dir is not None else os.environ.get(CIFAR10_ENV, DEFAULT_CACHE)
        if md5 is None and sha256 is None:
            raise ValueError("refusing to download without a checksum to verify")
        archive = download_cifar10(folder, md5=md5 or CIFAR10_MD5, sha256=sha256)
    else:
        archive = find_cifar10(data_dir)
    verify_checksum(archive, md5, sha256)
    parts = read_cifar10_archive(archive)
    train_px = np.concatenate([parts[f][0] for f in CIFAR10_TRAIN_FILES])
    train_lb = np.concatenate([parts[f][1] for f in CIFAR10_TRAIN_FILES])
    test_px, test_lb = parts[CIFAR10_TEST_FILE]
    info = {"archive": os.fspath(archive), "md5": md5, "sha256": sha256}

    def mk(px, lb):
        return ImageData(
            px.astype(np.float64),
            lb.astype(np.int64),
            "cifar10",
            CIFAR10_SHAPE,
            CIFAR10_CLASSES,
            {**info, "max_value": 255.0},
        )

    return mk(train_px, train_lb), mk(test_px, test_lb)


def write_cifar10_like(
    path: str | os.PathLike,
    train: list[tuple[np.ndarray, np.ndarray]],
    test: tuple[np.ndarray, np.ndarray],
) -> Path:
    """Write a small archive in the official binary format (for tests and examples).

    ``train`` holds five ``(pixels uint8 (n, 3072), labels (n,))`` batches, ``test`` one."""
    if len(train) != len(CIFAR10_TRAIN_FILES):
        raise ValueError(f"train must hold {len(CIFAR10_TRAIN_FILES)} batches")
    from ..core.io import atomic_write_bytes

    buf = _io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.GNU_FORMAT) as tar:
        for name, (px, lb) in zip((*CIFAR10_TRAIN_FILES, CIFAR10_TEST_FILE), (*train, test)):
            px = np.asarray(px, dtype=np.uint8).reshape(len(lb), -1)
            raw = np.concatenate([np.asarray(lb, np.uint8)[:, None], px], axis=1).tobytes()
            ti = tarfile.TarInfo(f"{CIFAR10_FOLDER}/{name}")
            ti.size, ti.mtime = len(raw), 0
            tar.addfile(ti, _io.BytesIO(raw))
    return atomic_write_bytes(path, buf.getvalue())


# --- the offline stand-in -----------------------------------------------------------------------


def load_digits() -> ImageData:
    """scikit-learn's bundled handwritten digits: 1797 images of 8 x 8 pixels in ``[0, 16]``."""
    from sklearn.datasets import load_digits as _load

    X, y = _load(return_X_y=True)
    return ImageData(
        X.astype(np.float64),
        y.astype(np.int64),
        "digits",
        (8, 8),
        tuple(str(i) for i in range(10)),
        {"max_value": 16.0},
    )


# --- preparation ----------------------------------------------------------------------------------


def train_test_split(
    data: ImageData, n_train: int, n_test: int | None, seed: int, *, test: ImageData | None = None
):
    """Seeded subsets: ``n_train`` training and ``n_test`` test images.

    Without ``test`` the images of ``data`` are permuted and split (disjoint); with ``test`` (an
    official test set) ``n_train`` images come from ``data`` and ``n_test`` from ``test``.
    ``n_test=None`` takes all that remain. Returns ``(Xtr, ltr, Xte, lte)``."""
    rng = np.random.default_rng([int(seed), 20230])
    if test is None:
        if n_train < 1 or n_train >= data.n:
            raise ValueError(
                f"n_train must lie in [1, {data.n - 1}] for {data.name}; got {n_train}"
            )
        perm = rng.permutation(data.n)
        rest = perm[n_train:]
        if n_test is not None:
            if n_test < 1 or n_test > rest.size:
                raise ValueError(
                    f"n_test must lie in [1, {rest.size}] with n_train={n_train}; got {n_test}"
                )
            rest = rest[:n_test]
        tr = np.sort(perm[:n_train])
        te = np.sort(rest)
        return data.X[tr], data.labels[tr], data.X[te], data.labels[te]
    if n_train < 1 or n_train > data.n:
        raise ValueError(f"n_train must lie in [1, {data.n}] for {data.name}; got {n_train}")
    tr = np.sort(rng.permutation(data.n)[:n_train])
    n_test = test.n if n_test is None else n_test
    if n_test < 1 or n_test > test.n:
        raise ValueError(f"n_test must lie in [1, {test.n}] for {test.name}; got {n_test}")
    te = np.sort(rng.permutation(test.n)[:n_test])
    return data.X[tr], data.labels[tr], test.X[te], test.labels[te]


def standardize(X_train: np.ndarray, X_test: np.ndarray, max_value: float, mode: str = "scale"):
    """``"scale"``: divide by the largest pixel value (inputs in ``[0, 1]``, as in the usual
    TensorFlow CIFAR-10 pipeline); ``"center"``: then subtract the training mean of each pixel;
    ``"zscore"``: then divide each pixel by its training standard deviation (constant pixels
    stay 0). Statistics come from the training set only."""
    if mode not in ("scale", "center", "zscore"):
        raise ValueError(f"mode must be 'scale', 'center' or 'zscore', got {mode!r}")
    if not max_value > 0:
        raise ValueError("max_value must be positive")
    tr, te = X_train / max_value, X_test / max_value
    if mode in ("center", "zscore"):
        mu = tr.mean(axis=0)
        tr, te = tr - mu, te - mu
    if mode == "zscore":
        sd = tr.std(axis=0)
        sd = np.where(sd > 0, sd, 1.0)
        tr, te = tr / sd, te / sd
    return tr, te


def binary_labels(labels: np.ndarray, dataset: str) -> np.ndarray:
    """``+1`` for the classes of ``POSITIVE_CLASSES[dataset]``, ``-1`` otherwise."""
    pos = np.isin(labels, POSITIVE_CLASSES[dataset])
    return np.where(pos, 1.0, -1.0)


def prepare(
    dataset: str,
    n_train: int,
    n_test: int | None,
    seed: int,
    *,
    task: str = "multiclass",
    mode: str = "scale",
    data_dir=None,
    download: bool = False,
    md5: str | None = CIFAR10_MD5,
    sha256: str | None = None,
) -> Split:
    """Load ``dataset`` (``"digits"`` or ``"cifar10"``), split, standardize and label it.

    ``task="multiclass"``: labels 0..9 (cross-entropy); ``"binary"``: labels in ``{-1, +1}``
    from :func:`binary_labels` (logistic loss)."""
    if task not in ("multiclass", "binary"):
        raise ValueError(f"task must be 'multiclass' or 'binary', got {task!r}")
    if dataset == "digits":
        full = load_digits()
        Xtr, ltr, Xte, lte = train_test_split(full, n_train, n_test, seed)
        max_value, info = full.info["max_value"], {"source": "sklearn.datasets.load_digits"}
    elif dataset == "cifar10":
        train, test = load_cifar10(data_dir, download=download, md5=md5, sha256=sha256)
        Xtr, ltr, Xte, lte = train_test_split(train, n_train, n_test, seed, test=test)
        max_value, info = 255.0, {"source": train.info["archive"]}
    else:
        raise ValueError(f"dataset must be 'digits' or 'cifar10', got {dataset!r}")
    Xtr, Xte = standardize(Xtr, Xte, max_value, mode)
    if task == "binary":
        ytr, yte, k = binary_labels(ltr, dataset), binary_labels(lte, dataset), 2
    else:
        ytr, yte, k = ltr, lte, 10
    return Split(Xtr, ytr, Xte, yte, dataset, k, info)
