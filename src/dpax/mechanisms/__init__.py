"""Mechanisms as PrivacyLoss values: the Gaussian, the Poisson-subsampled Gaussian, DP-SGD,
Laplace, randomized response, discrete mechanisms, and any mechanism given by its privacy
profile.

All parameters broadcast like NumPy; a batch is built by one compiled kernel
(:mod:`dpax._engine.construct`). Every mechanism's risks are reported for the symmetrised
curve (add/remove neighbouring unless ``neighbouring="substitution"``).

One module per family:

* :mod:`.gaussian_family` -- :func:`gaussian`, :func:`subsampled_gaussian` (add/remove and
  substitution), :func:`dpsgd`, :func:`mixture_of_gaussians`;
* :mod:`.laplace_family` -- :func:`laplace`, :func:`subsampled_laplace`;
* :mod:`.atoms` -- :func:`from_atoms`, :func:`randomized_response`, :func:`approximate_dp`,
  :func:`discrete_laplace`, :func:`discrete_gaussian`;
* :mod:`.profile` -- :func:`from_privacy_profile`;
* ``_common`` -- what they share: :data:`SINGLE_STEP_TAIL`, :data:`NEIGHBOURING`, the
  noise limits, argument checks and descriptions.

>>> import dpax
>>> dpax.dpsgd([1.0, 2.0], 0.01, 100, grid_step=1e-3).epsilon(1e-5).round(3)
array([0.718, 0.19 ])
"""

from ._common import NEIGHBOURING, SINGLE_STEP_TAIL
from .atoms import approximate_dp, discrete_gaussian, discrete_laplace, from_atoms, randomized_response
from .gaussian_family import _SIGMA_MAX as _SIGMA_MAX
from .gaussian_family import dpsgd, gaussian, mixture_of_gaussians, subsampled_gaussian
from .laplace_family import laplace, subsampled_laplace
from .profile import from_privacy_profile

__all__ = [
    "NEIGHBOURING",
    "SINGLE_STEP_TAIL",
    "approximate_dp",
    "discrete_gaussian",
    "discrete_laplace",
    "dpsgd",
    "from_atoms",
    "from_privacy_profile",
    "gaussian",
    "laplace",
    "mixture_of_gaussians",
    "randomized_response",
    "subsampled_gaussian",
    "subsampled_laplace",
]
