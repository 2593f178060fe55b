"""Discrete dominating pairs on the grid ``k * grid_step`` (Kulynych et al. 2024, Appendix E.1).

Two constructions:

* :func:`split_cells` — for mechanisms whose privacy-loss law is known in closed form
  (Gaussian, Poisson-subsampled Gaussian, mixture of Gaussians, Laplace; the ``*_log_cdfs``
  functions give the laws, the ``*_kernel`` functions the pairs). Each grid cell (a, b] of
  losses is split between its two end points so that both its Q-mass and its P-mass are
  kept: a pair with likelihood ratio in [e^a, e^b] is a post-processing of the two-point
  pair with ratios exactly e^a and e^b. This is the connect-the-dots pair of Doroshenko
  et al. (Algorithm 2 of Kulynych et al. 2024), but computed from *first* differences of the
  loss CDFs, evaluated in log space in both tails, instead of second differences of delta(epsilon). The rounding
  error of a cumulative probability is then about 1e-16 / grid_step relative, instead of
  1e-16 / grid_step^2 absolute, so the construction stays exact at grid 1e-5.
  Losses outside the grid are collapsed the same way: the region above the last point
  becomes that point plus the +inf atom of Y, the region below the first point becomes
  that point plus the -inf atom of X. Nothing is dropped, so the pair is dominating.

* :func:`connect_the_dots` — Algorithm 2 literally, from a vectorised privacy profile
  delta(epsilon), for mechanisms known only through their profile. Its accuracy is that
  of second differences: about 1e-16 / grid_step^2 per point mass.

Modules: :mod:`.cells` (cell splitting, closing the mass, one length per row),
:mod:`.gaussian`, :mod:`.laplace`, :mod:`.mixture` (laws in closed form), :mod:`.atoms`
(laws made of atoms, regridding) and :mod:`.profile` (Algorithm 2 from a privacy profile).
"""

from .atoms import atoms_kernel, atoms_log_cdfs, pair_from_atoms, regrid_kernel, split_atoms
from .cells import (
    CONSTRUCT_BYTES_PER_POINT,
    _mass_between,
    as_pair,
    by_row_length,
    close_mass,
    close_rounding,
    one_call,
    row_lengths,
    split_cells,
    split_cells_ahead,
    split_cells_open,
)
from .gaussian import (
    subsampled_gaussian_kernel,
    subsampled_gaussian_log_cdfs,
    subsampled_gaussian_substitution_kernel,
    subsampled_gaussian_substitution_log_cdfs,
    substitution_output_of_loss,
)
from .laplace import inverse_subsampled_loss, laplace_kernel, laplace_log_cdfs, subsampled_laplace_log_cdfs
from .mixture import (
    MIXTURE_BYTES_PER_COMPONENT,
    MIXTURE_MAX_ITERATIONS,
    mixture_log_cdfs,
    mixture_of_gaussians_kernel,
    mixture_output_of_loss,
)
from .profile import connect_the_dots

__all__ = [
    "CONSTRUCT_BYTES_PER_POINT", "MIXTURE_BYTES_PER_COMPONENT", "MIXTURE_MAX_ITERATIONS", "_mass_between", "as_pair",
    "atoms_kernel", "atoms_log_cdfs", "by_row_length", "close_mass", "close_rounding", "connect_the_dots",
    "inverse_subsampled_loss", "laplace_kernel", "laplace_log_cdfs", "mixture_log_cdfs", "mixture_of_gaussians_kernel",
    "mixture_output_of_loss", "one_call", "pair_from_atoms", "regrid_kernel", "row_lengths", "split_atoms",
    "split_cells", "split_cells_ahead", "split_cells_open", "subsampled_gaussian_kernel",
    "subsampled_gaussian_log_cdfs", "subsampled_gaussian_substitution_kernel",
    "subsampled_gaussian_substitution_log_cdfs", "subsampled_laplace_log_cdfs", "substitution_output_of_loss",
]
