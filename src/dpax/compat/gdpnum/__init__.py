"""gdpnum's API on the dpax engine: ``import dpax.compat.gdpnum as gdpnum`` wherever
``import gdpnum`` was.

Mirrors gdpnum 0.1.2 module for module: :mod:`.converter` (``PLDConverter``,
``get_worst_case_regret``, ``gaussian_fdp``) and :mod:`.dpsgd`
(``get_mu_and_regret_for_dpsgd``, ``CTDAccountant``), with the same names at the top level
as gdpnum's ``__init__`` exports (plus ``get_mu_and_regret_for_dpsgd``). The quantities
are those of Gomez, Kulynych, Kaissis, Hayes, Balle and Honkela, "(epsilon, delta) considered
harmful: best practices for reporting differential privacy guarantees" (2025): the tight mu
of the symmetrised trade-off curve (Eq. 11 / Appendix B, Eq. 29) and its regret
Delta(h, f_mu) (Eq. 13), from :func:`dpax.gdp.mu_and_regret`.

    import dpax.compat.gdpnum as gdpnum
    mu, regret = gdpnum.dpsgd.get_mu_and_regret_for_dpsgd(noise_multiplier=9.4, sample_rate=0.328, num_steps=2000)
"""

from . import converter, dpsgd
from .converter import PLDConverter, gaussian_fdp, get_worst_case_regret
from .dpsgd import CTDAccountant, get_mu_and_regret_for_dpsgd

__all__ = ["CTDAccountant", "PLDConverter", "converter", "dpsgd", "gaussian_fdp", "get_mu_and_regret_for_dpsgd",
           "get_worst_case_regret"]
