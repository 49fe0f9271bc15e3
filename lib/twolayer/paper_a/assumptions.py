"""The data assumptions of Paper A and the probability bounds behind Lemma 3.3.

Theorem 3.2 assumes, with ``p = max_{i != j} |<x_i, x_j>|`` and ``R_min, R_max`` the smallest
and largest ``||x_i||``::

    n <= (gamma^3 / 3) * (R_min^2 / p) * (R_min^2 / R_max^2).

Lemma 3.3: for ``x_i ~ N(0, I_d)`` this holds with high probability once
``d >> n^2 log n`` (constants depending on ``gamma``). :func:`sufficient_dimension` makes the
constant explicit with two standard bounds (our derivation, stated on the page):

* ``||x||`` is 1-Lipschitz in a standard Gaussian vector, so
  ``P(| ||x|| - E||x|| | >= t) <= 2 exp(-t^2 / 2)``, and
  ``sqrt(d) - 1/sqrt(d) <= E||x|| <= sqrt(d)``;
* given ``x_j``, ``<x_i, x_j> ~ N(0, ||x_j||^2)``, so
  ``P(|<x_i, x_j>| >= s ||x_j||) <= 2 exp(-s^2/2)``.

A union bound over the ``n`` norms and ``n(n-1)/2`` pairs, each half of the failure
probability ``delta``, gives deviations ``t = sqrt(2 log(4n/delta))`` and
``s = sqrt(2 log(2n(n-1)/delta))``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from ..core import stats


@dataclass(frozen=True)
class NearOrthogonality:
    """Theorem 3.2's assumption evaluated on one data set."""

    n: int
    p: float  # max_{i != j} |<x_i, x_j>|
    R_min: float
    R_max: float
    gamma: float
    n_max: float  # (gamma^3/3) (R_min^2/p) (R_min^2/R_max^2)

    @property
    def ratio(self) -> float:
        """``n / n_max``: the assumption holds iff ``ratio <= 1``."""
        return self.n / self.n_max if self.n_max > 0 else math.inf

    @property
    def holds(self) -> bool:
        return self.n <= self.n_max

    def as_dict(self) -> dict:
        return {**asdict(self), "ratio": self.ratio, "holds": self.holds}


def gram_statistics(X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For ``X`` of shape ``(..., n, d)``: norms ``(..., n)``, ``p`` ``(...)`` and the Gram."""
    X = np.asarray(X, dtype=np.float64)
    G = X @ np.swapaxes(X, -1, -2)
    norms = np.sqrt(np.clip(np.diagonal(G, axis1=-2, axis2=-1), 0, None))
    n = G.shape[-1]
    off = np.abs(G) * (1 - np.eye(n))
    p = off.max(axis=(-2, -1)) if n > 1 else np.zeros(G.shape[:-2])
    return norms, p, G


def data_statistics(X, gamma: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate ``gamma in (0, 1]`` and an ``(n, d)`` array ``X`` with ``n >= 2``; return
    :func:`gram_statistics` of its rows (the inputs of Theorems 3.2 and 4.2's assumptions)."""
    if not (0 < gamma <= 1):
        raise ValueError(f"gamma must lie in (0, 1], got {gamma}")
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 2:
        raise ValueError("X must be an (n, d) array with n >= 2")
    return gram_statistics(X)


def near_orthogonality(X, gamma: float) -> NearOrthogonality:
    """Evaluate Theorem 3.2's assumption on the rows of ``X`` (needs ``n >= 2``)."""
    norms, p, _ = data_statistics(X, gamma)
    X = np.asarray(X)
    rmin, rmax, p = float(norms.min()), float(norms.max()), float(p)
    n_max = (gamma**3 / 3.0) * (rmin**2 / p) * (rmin**2 / rmax**2) if p > 0 else math.inf
    return NearOrthogonality(X.shape[0], p, rmin, rmax, float(gamma), n_max)


def assumption_ratio(norms: np.ndarray, p: np.ndarray, n: int, gamma: float) -> np.ndarray:
    """Vectorized ``n / n_max`` from per-draw norms ``(..., n)`` and ``p`` ``(...)``."""
    rmin, rmax = norms.min(axis=-1), norms.max(axis=-1)
    return n * 3.0 * p * rmax**2 / (gamma**3 * rmin**4)


def norm_deviation_bound(n: int, d: int, delta: float, sigma_max: float = 1.0) -> float:
    """``max_i | ||x_i|| - sqrt(d) | <= s/sqrt(d) + sqrt(2 s log(2n/delta))`` w.p.
    ``>= 1 - delta`` for ``x_i = Sigma^{1/2} xbar_i``, ``tr Sigma = d``, ``s = ||Sigma||_2``:
    ``||x||`` is ``sqrt(s)``-Lipschitz in ``xbar``, and ``sqrt(d) - s/sqrt(d) <= E||x|| <=
    sqrt(d)`` (its variance is at most ``s``, Poincare)."""
    s = float(sigma_max)
    return s / math.sqrt(d) + math.sqrt(2.0 * s * math.log(2.0 * n / delta))


def inner_product_bound(n: int, delta: float, sigma_max: float = 1.0) -> float:
    """``s`` with ``max_{i<j} |<x_i, x_j>| <= s * max_j ||x_j||`` w.p. ``>= 1 - delta``: given
    ``x_j``, ``<x_i, x_j> ~ N(0, x_j' Sigma x_j)`` with
    ``x_j' Sigma x_j <= ||Sigma|| ||x_j||^2``."""
    pairs = max(n * (n - 1) / 2.0, 1.0)
    return math.sqrt(2.0 * float(sigma_max) * math.log(2.0 * pairs / delta))


def two_level_spectrum(d: int, aniso: float) -> np.ndarray:
    """A diagonal ``Sigma`` with ``tr Sigma = d`` and ``||Sigma||_2 = 1 + aniso``: the first
    ``d // 2`` variances are ``1 + aniso``, the rest share what remains (Lemma 3.3 allows any
    ``Sigma`` with ``tr Sigma = d`` and ``||Sigma||_2 = O(1)``); ``aniso = 0`` is ``I_d``."""
    if not 0 <= aniso < 1:
        raise ValueError(f"aniso must lie in [0, 1), got {aniso}")
    h = d // 2
    low = (d - h * (1 + aniso)) / (d - h)
    return np.concatenate([np.full(h, 1.0 + aniso), np.full(d - h, low)])


def holds_surely(n: int, d: int, gamma: float, delta: float) -> bool:
    """Whether the two union bounds (each with ``delta/2``) force Theorem 3.2's assumption."""
    t = norm_deviation_bound(n, d, delta / 2)
    s = inner_product_bound(n, delta / 2)
    rmin = math.sqrt(d) - t
    rmax = math.sqrt(d) + t
    if rmin <= 0:
        return False
    # n <= (gamma^3/3) rmin^4 / (p rmax^2) with p <= s rmax
    return n <= (gamma**3 / 3.0) * rmin**4 / (s * rmax**3)


def sufficient_dimension(n: int, gamma: float, delta: float) -> int:
    """Smallest ``d`` at which :func:`holds_surely` is true: the assumption then holds with
    probability at least ``1 - delta``. Grows like ``(18/gamma^6) n^2 log(n^2/delta)``."""
    if n < 2:
        raise ValueError("n must be at least 2")
    lo, hi = 1, 2
    while not holds_surely(n, hi, gamma, delta):
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if holds_surely(n, mid, gamma, delta):
            hi = mid
        else:
            lo = mid
    return hi


def lemma33_sweep(
    ns,
    ratios,
    draws: int,
    gamma: float,
    *,
    seed: int,
    dims=None,
    progress: bool | None = None,
    aniso: float = 0.0,
    gram: str = "coordinates",
) -> list[dict]:
    """Draw ``draws`` Gaussian data sets ``N(0, Sigma)`` (``Sigma`` from
    :func:`two_level_spectrum`, ``I_d`` when ``aniso = 0``) for each ``n`` in ``ns`` and each
    ``d = round(ratio * n^2 log n)`` (or each ``d`` in ``dims[n]`` when ``dims`` is given);
    return one record per draw with ``n, d, ratio, draw, p, R_min, R_max, max_norm_dev,
    assumption_ratio, holds`` (``ratio = d / (n^2 log n)``).

    Each draw has its own generator seeded by ``(seed, n, d, draw)``, so any cell of the
    sweep can be recomputed alone. ``gram``: how a data set's Gram matrix is drawn, which is
    all the assumption reads: ``"coordinates"`` draws the ``n x d`` data (cost ``O(n d)``),
    ``"wishart"`` draws the Gram matrix from its exact law (``_wishart_gram_stats``,
    cost ``O(n^3)``, independent of ``d``); the two give different draws of the same law."""
    if gram not in ("coordinates", "wishart"):
        raise ValueError(f"gram must be 'coordinates' or 'wishart', got {gram!r}")
    stats = _gaussian_gram_stats if gram == "coordinates" else _wishart_gram_stats
    import sys

    from tqdm import tqdm

    if progress is None:
        progress = sys.stderr.isatty()
    jobs = []
    for n in ns:
        n = int(n)
        if n < 2:
            raise ValueError(f"every n must be at least 2 (log n > 0), got {n}")
        if dims is not None:
            jobs += [(n, int(d)) for d in dims[n]]
        else:
            jobs += [(n, max(2, int(round(float(c) * n * n * math.log(n))))) for c in ratios]
    rows = []
    for n, d in tqdm(jobs, desc="Lemma 3.3 sweep", disable=not progress, file=sys.stderr):
        for k in range(draws):
            norms, p = stats(n, d, [int(seed), n, d, k], aniso)
            q = float(assumption_ratio(norms, p, n, gamma))
            rows.append(
                {
                    "n": n,
                    "d": d,
                    "ratio": d / (n * n * math.log(n)),
                    "draw": k,
                    "p": float(p),
                    "R_min": float(norms.min()),
                    "R_max": float(norms.max()),
                    "max_norm_dev": float(np.abs(norms - math.sqrt(d)).max()),
                    "assumption_ratio": q,
                    "holds": bool(q <= 1.0),
                }
            )
    return rows


CHUNK = 1 << 18  # columns drawn at a time: memory stays O(n * CHUNK) for any d


def _gaussian_gram_stats(n: int, d: int, seed, aniso: float = 0.0) -> tuple[np.ndarray, float]:
    """Norms and ``p`` of ``n`` Gaussian vectors ``N(0, Sigma)`` in ``R^d``, drawn ``CHUNK``
    coordinates at a time (the Gram matrix is accumulated), so ``d`` in the millions fits in
    memory. The isotropic draws do not depend on ``aniso`` (the same generator stream)."""
    rng = np.random.default_rng(seed)
    scale = np.sqrt(two_level_spectrum(d, aniso)) if aniso else None
    G = np.zeros((n, n))
    for start in range(0, d, CHUNK):
        block = rng.standard_normal((n, min(CHUNK, d - start)))
        if scale is not None:
            block *= scale[start : start + block.shape[1]]
        G += block @ block.T
    return _norms_and_p(G)


def _norms_and_p(G: np.ndarray) -> tuple[np.ndarray, float]:
    """The norms ``sqrt(G_ii)`` and ``p = max_{i != j} |G_ij|`` of a Gram matrix."""
    norms = np.sqrt(np.diagonal(G).copy())
    p = float((np.abs(G) * (1 - np.eye(G.shape[0]))).max())
    return norms, p


def _wishart(n: int, df: int, rng) -> np.ndarray:
    """``X X^T`` for ``X`` with ``df`` i.i.d. ``N(0, I_n)`` columns, drawn from its law, the
    Wishart ``W_n(I, df)``, by Bartlett's decomposition (``df >= n``): ``A`` lower triangular
    with ``A_ii^2 ~ chi^2(df - i)`` (``i = 0..n-1``) and ``A_ij ~ N(0, 1)`` below the
    diagonal; ``X X^T = A A^T`` in law."""
    A = np.zeros((n, n))
    A[np.tril_indices(n, -1)] = rng.standard_normal(n * (n - 1) // 2)
    A[np.diag_indices(n)] = np.sqrt(rng.chisquare(df - np.arange(n)))
    return A @ A.T


def _wishart_gram_stats(n: int, d: int, seed, aniso: float = 0.0) -> tuple[np.ndarray, float]:
    """What :func:`_gaussian_gram_stats` returns, drawn from the Gram matrix's exact law: for
    ``Sigma = I_d`` it is Wishart ``W_n(I, d)``; for :func:`two_level_spectrum` it is
    ``(1 + aniso) W_n(I, d_1) + s W_n(I, d - d_1)`` (independent), ``s`` the lower variance.
    ``O(n^3)`` whatever ``d``, which makes the paper profile's sweep (``d`` up to 6 million)
    take seconds instead of hours. Where ``d < n`` (a singular Wishart) it draws the data."""
    spec = two_level_spectrum(d, aniso) if aniso else None
    h = d // 2 if aniso else d
    if h < n or (aniso and d - h < n):
        return _gaussian_gram_stats(n, d, seed, aniso)
    rng = np.random.default_rng(seed)
    if spec is None:
        G = _wishart(n, d, rng)
    else:
        G = spec[0] * _wishart(n, h, rng) + spec[-1] * _wishart(n, d - h, rng)
    return _norms_and_p(G)


def log_exponent(rows, n_boot: int = 200, seed: int = 0, level: float = 0.95):
    """Fit ``d_50 ~ n^2 (log n)^b`` over the ``n`` of a :func:`lemma33_sweep`: ``b`` (least
    squares of ``log(d_50 / n^2)`` on ``log log n``) and a bootstrap interval (draws
    resampled within each ``(n, d)`` cell). Lemma 3.3 has ``b`` near 1; ``d ~ n^2`` alone is
    ``b = 0``. Returns ``(b, (lo, hi))``; NaN when a half point falls outside the grid."""
    import pandas as pd

    df = pd.DataFrame(rows)
    ns = sorted(df.n.unique())
    if len(ns) < 2:
        raise ValueError("the exponent needs at least two values of n")
    rng = np.random.default_rng(seed)
    cells = [(n, g.sort_values("d")) for n, g in df.groupby("n")]

    def fit(resample: bool) -> float:
        ys = []
        for n, g in cells:
            fr = []
            for _, c in g.groupby("d", sort=True):
                h = c.holds.to_numpy()
                if resample:
                    h = h[rng.integers(len(h), size=len(h))]
                fr.append(h.mean())
            d50 = half_point(np.sort(g.d.unique()), fr)
            ys.append(math.log(d50 / (n * n)) if math.isfinite(d50) else math.nan)
        x = np.log(np.log(np.asarray(ns, dtype=float)))
        y = np.asarray(ys)
        if not np.isfinite(y).all():
            return math.nan
        return stats.fit_slope(x, y, axes="linear")

    b = fit(False)
    boots = np.array([fit(True) for _ in range(n_boot)])
    boots = boots[np.isfinite(boots)]
    if boots.size < n_boot // 2:
        return b, (math.nan, math.nan)
    a = (1 - level) / 2
    return b, (float(np.quantile(boots, a)), float(np.quantile(boots, 1 - a)))


def fraction_table(rows):
    """Aggregate :func:`lemma33_sweep` records per ``(n, d)``: the fraction of draws satisfying
    the assumption, and the medians of ``p / sqrt(d log n)`` and
    ``max_i | ||x_i|| - sqrt(d) | / sqrt(log n)`` (both O(1) by Lemma 3.3)."""
    import pandas as pd

    df = pd.DataFrame(rows)
    out = df.groupby(["n", "d"], as_index=False).agg(
        ratio=("ratio", "first"),
        fraction=("holds", "mean"),
        p_scaled=("p", "median"),
        norm_dev=("max_norm_dev", "median"),
    )
    out["p_scaled"] /= np.sqrt(out["d"] * np.log(out["n"]))
    out["norm_dev"] /= np.sqrt(np.log(out["n"]))
    return out


def half_point(x, fraction) -> float:
    """The ``x`` at which ``fraction`` (sorted by increasing ``x``) first reaches 1/2, by
    linear interpolation in ``log x``; NaN when the grid does not bracket the crossing."""
    x, f = np.asarray(x, dtype=float), np.asarray(fraction, dtype=float)
    above = np.nonzero(f >= 0.5)[0]
    if above.size == 0 or above[0] == 0:
        return math.nan
    k = int(above[0])
    t = (0.5 - f[k - 1]) / (f[k] - f[k - 1])
    return float(np.exp(np.log(x[k - 1]) + t * (np.log(x[k]) - np.log(x[k - 1]))))
