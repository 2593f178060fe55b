"""Write examples/train.npy and examples/test.npy: per-example losses of a simulated model for
``dpax epsilon-star examples/train.npy examples/test.npy``.

The losses are those of the README's Python example (the Epsilon* paper's Appendix 8.1
simulation): training losses Gamma(2, 5) and held-out losses Gamma(3, 5), 10,000 each, from
``numpy.random.default_rng(0)``, so the command prints the numbers the README shows for
``dpax.audit.epsilon_star(train, test, delta=1e-5)`` (parametric 4.85, empirical 2.53).
Deterministic: running it again writes the same bytes (float64, 80 kB a file).

    .venv/bin/python examples/make_losses.py
"""

from __future__ import annotations

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SEED, N = 0, 10_000


def make_losses(seed: int = SEED, n: int = N) -> tuple[np.ndarray, np.ndarray]:
    """(train, test) losses: Gamma(2, 5) on training data, Gamma(3, 5) held out."""
    rng = np.random.default_rng(seed)
    return rng.gamma(2, 5, n), rng.gamma(3, 5, n)


def main(out_dir: str = HERE) -> tuple[str, str]:
    train, test = make_losses()
    paths = os.path.join(out_dir, "train.npy"), os.path.join(out_dir, "test.npy")
    for path, losses in zip(paths, (train, test)):
        np.save(path, losses.astype("<f8"), allow_pickle=False)
    return paths


if __name__ == "__main__":
    for p in main():
        print(f"wrote {p} ({os.path.getsize(p):,} bytes)")
