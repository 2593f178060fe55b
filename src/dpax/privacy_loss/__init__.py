"""The PrivacyLoss value: a batch of discrete PLRV pairs on one uniform grid.

A ``PrivacyLoss`` holds, for every configuration in a batch (leading axes), the PLRVs of a
discrete dominating pair (P, Q) on the losses ``(offset + i) * grid_step``
(Kulynych et al. 2024, Definition 3.3): ``pmf_y`` is the law of Y = log(Q/P) under Q with its mass at
+inf beside it (``inf_mass_y``), ``pmf_x`` the law of X = log(Q/P) under P with its mass at
-inf (``neginf_mass_x``). The two are not assumed to satisfy Pr[X = x] = e^-x Pr[Y = x]
exactly. It is a JAX pytree, so it can be passed through ``jax.jit`` and ``jax.vmap``.

Every risk method reports the symmetrised (add/remove) curve; the kernels behind them are in
:mod:`dpax._engine.analyse` (risks) and :mod:`dpax._engine.composition` (composition).

The package, one module per job, bottom up: ``interval`` (the certified bracket),
``checks`` (argument checks), ``fields`` (what a value holds, fixed at construction),
``companion`` (the optimistic companion, memoised outside the value), ``risks``,
``shaping`` (rows), ``regridding``, ``composing``, ``value`` (the class and ``compose``),
``refining`` (:func:`refine`).

>>> import dpax
>>> pl = dpax.gaussian(1.0, grid_step=1e-2)
>>> round(pl.advantage(), 4), round(pl.epsilon(1e-5), 4)
(0.3829, 4.3772)
"""

from .checks import MASS_TOLERANCE
from .fields import NO_COMPANION
from .interval import CROSSING_ROUNDOFF, Interval
from .interval import uncrossed as _uncrossed  # noqa: F401 - the name tests and older callers import
from .refining import REFINE_MIN_STEP, Refined, refine, refine_step
from .refining import _reached as _reached  # calibration's accuracy fit words its messages alike
from .value import PrivacyLoss, compose

__all__ = ["CROSSING_ROUNDOFF", "MASS_TOLERANCE", "NO_COMPANION", "REFINE_MIN_STEP", "Interval", "PrivacyLoss",
           "Refined", "compose", "refine", "refine_step"]
