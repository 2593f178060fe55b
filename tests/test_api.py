"""Public API contract: float64 hygiene, broadcasting, input validation, pytree, repr."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap

import jax
import numpy as np
import pytest
from scipy.stats import norm

import dpax
from dpax.targets import Advantage, Epsilon, ErrRates
from exact_refs import gdp_beta

# --------------------------------------------------------------------------------------
# float64 without touching the user's JAX configuration
# --------------------------------------------------------------------------------------


def _run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300
    )


def test_in_process_config_untouched():
    before = jax.config.jax_enable_x64
    dpax.gaussian(1.0, grid_step=1e-3).beta(0.1)
    assert jax.config.jax_enable_x64 == before


# --------------------------------------------------------------------------------------
# broadcasting
# --------------------------------------------------------------------------------------


# default siblings: test_num_steps_broadcast (a dpsgd batch row against its single call) and
# tests/engine/test_composition.py::test_a_narrow_row_in_a_wide_batch_keeps_its_own_far_tails
@pytest.mark.slow
def test_dpsgd_broadcasts_like_numpy():
    noise = [0.8, 1.0, 1.2]
    alphas = [0.01, 0.1]
    pl = dpax.dpsgd(noise, 0.01, 100, grid_step=1e-3)
    assert pl.batch_shape == (3,)
    b = pl.beta(alphas)
    assert b.shape == (3, 2)
    # a batch shares one padded support (so one FFT length): round-off differs from the
    # single calls by ~1.4e-12 observed; the FFT's mass round-off (~1e-12) is booked on the
    # +inf atom, so delta can differ by that much, epsilon(1e-5) by ~3e-8 relative
    for i, s in enumerate(noise):
        single = dpax.dpsgd(s, 0.01, 100, grid_step=1e-3)
        np.testing.assert_allclose(b[i], single.beta(alphas), rtol=0, atol=1e-11)
        assert pl.advantage()[i] == pytest.approx(single.advantage(), abs=1e-11)
        np.testing.assert_allclose(pl.delta([0.5, 1.0])[i], single.delta([0.5, 1.0]), rtol=0, atol=1e-11)
        np.testing.assert_allclose(pl.epsilon([1e-5, 1e-3])[i], single.epsilon([1e-5, 1e-3]), rtol=2e-7)
    assert pl.advantage().shape == (3,)
    assert pl.epsilon([1e-5, 1e-6, 1e-7]).shape == (3, 3)
    assert pl.delta(1.0).shape == (3,)
    assert pl.beta(np.full((2, 2), 0.1)).shape == (3, 2, 2)


# default siblings: tests/mechanisms/test_mechanisms_atoms.py::test_discrete_batch_broadcasts (a column x row broadcast
# to a (2, 3) batch, an element against its single call), test_num_steps_broadcast (a dpsgd batch
# row against its single call, monotone) and
# tests/engine/test_composition.py::test_a_narrow_row_in_a_wide_batch_keeps_its_own_far_tails
@pytest.mark.slow
def test_two_dimensional_broadcast():
    # noise 1 and 2 at rate 0.01
    noise = np.array([[1.0], [2.0]])
    rates = [0.01, 0.1]
    steps = 10
    pl = dpax.dpsgd(noise, rates, steps, grid_step=1e-3)
    assert pl.batch_shape == (2, 2)
    b = pl.beta(0.05)
    assert b.shape == (2, 2)
    assert pl.tradeoff_points()[0].shape == (2, 2, pl.support_length + 1)
    assert pl.loss_values().shape == (2, 2, pl.support_length)
    for i, j in ((0, 0), (1, 1)):  # two corners; row independence: tests/engine
        ref = dpax.dpsgd(noise[i, 0], rates[j], steps, grid_step=1e-3).beta(0.05)
        assert b[i, j] == pytest.approx(ref, abs=1e-11)
    # more noise, or a smaller rate, is more private
    assert np.all(np.diff(b, axis=0) > 0) and np.all(np.diff(b, axis=1) < 0)


def test_num_steps_broadcast():
    # the batch of test_privacy_loss_is_a_pytree and test_repr_is_informative; two rows (10, 100
    # and 1000 steps until 2026-11-27): the rows' construction and window kernels are those of
    # tests/test_plot.py's two-row DP-SGD batch on the same support (6144 points), and 100 steps
    # the single call's FFT
    pl = dpax.dpsgd(1.0, 0.01, [10, 100], grid_step=1e-3)
    b = pl.beta(0.1)
    assert b.shape == (2,)
    assert np.all(np.diff(b) < 0)
    assert b[1] == pytest.approx(dpax.dpsgd(1.0, 0.01, 100, grid_step=1e-3).beta(0.1), abs=1e-11)


def test_gaussian_batch_matches_closed_form():
    sig = np.array([1.0, 2.0])  # the rows of test_compose_broadcasts_batches (0.5 too until 2026-11-27)
    pl = dpax.gaussian(sig, grid_step=1e-3)
    a = np.array([1e-4, 0.01, 0.3])
    # row by row, on the batch's 20480-point support: the one-row beta kernel of
    # tests/test_benchmarks.py (the whole batch's would be this file's own); a batch's beta in
    # one call: test_num_steps_broadcast
    b = np.stack([pl[i].beta(a) for i in range(sig.size)])
    np.testing.assert_allclose(b, gdp_beta(a[None, :], 1 / sig[:, None]), atol=1e-6)


def test_compose_broadcasts_batches():
    a = dpax.gaussian([1.0, 2.0], grid_step=1e-3)
    b = dpax.gaussian(2.0, grid_step=1e-3)
    c = a.compose(b)
    assert c.batch_shape == (2,)
    mu = np.sqrt(1 / np.array([1.0, 4.0]) + 1 / 4)
    np.testing.assert_allclose(c.beta(0.1), gdp_beta(0.1, mu), atol=1e-5)


# --------------------------------------------------------------------------------------
# input validation: ValueError / TypeError naming the argument
# --------------------------------------------------------------------------------------

BAD_INPUTS = [
    ("noise 0", lambda: dpax.gaussian(0.0), ValueError, "noise_multiplier"),
    ("noise -1", lambda: dpax.gaussian(-1.0), ValueError, "noise_multiplier"),
    ("noise nan", lambda: dpax.gaussian(float("nan")), ValueError, "noise_multiplier"),
    ("noise inf", lambda: dpax.gaussian(float("inf")), ValueError, "noise_multiplier"),
    ("noise str", lambda: dpax.gaussian("abc"), TypeError, "noise_multiplier"),
    ("noise in batch", lambda: dpax.dpsgd([1.0, -1.0], 0.1, 10), ValueError, "noise_multiplier"),
    ("noise nan in batch", lambda: dpax.dpsgd([1.0, np.nan], 0.1, 10), ValueError, "noise_multiplier"),
    ("sensitivity 0", lambda: dpax.gaussian(1.0, sensitivity=0.0), ValueError, "sensitivity"),
    ("sample_rate 0", lambda: dpax.dpsgd(1.0, 0.0, 10), ValueError, "sample_rate"),
    ("sample_rate 1.5", lambda: dpax.dpsgd(1.0, 1.5, 10), ValueError, "sample_rate"),
    ("sample_rate -0.1", lambda: dpax.subsampled_gaussian(1.0, -0.1), ValueError, "sample_rate"),
    ("sample_rate nan", lambda: dpax.subsampled_gaussian(1.0, float("nan")), ValueError, "sample_rate"),
    ("num_steps 0", lambda: dpax.dpsgd(1.0, 0.1, 0), ValueError, "num_steps"),
    ("num_steps -1", lambda: dpax.dpsgd(1.0, 0.1, -1), ValueError, "num_steps"),
    ("num_steps 1.5", lambda: dpax.dpsgd(1.0, 0.1, 1.5), ValueError, "num_steps"),
    ("num_steps nan", lambda: dpax.dpsgd(1.0, 0.1, float("nan")), ValueError, "num_steps"),
    ("num_steps bool", lambda: dpax.dpsgd(1.0, 0.1, True), TypeError, "num_steps"),
    ("self_compose 0", lambda: dpax.gaussian(1.0, grid_step=1e-4).self_compose(0), ValueError, "num_steps"),
    ("grid_step 0", lambda: dpax.gaussian(1.0, grid_step=0.0), ValueError, "grid_step"),
    ("grid_step -1e-3", lambda: dpax.gaussian(1.0, grid_step=-1e-3), ValueError, "grid_step"),
    ("grid_step nan", lambda: dpax.gaussian(1.0, grid_step=float("nan")), ValueError, "grid_step"),
    ("grid_step array", lambda: dpax.gaussian(1.0, grid_step=[1e-3, 1e-4]), TypeError, "grid_step"),
    ("grid too fine", lambda: dpax.gaussian(0.05, grid_step=1e-7), ValueError, "GiB"),
    ("batch too big", lambda: dpax.dpsgd(np.full(2000, 0.3), 0.5, 10, grid_step=1e-5), ValueError, "GiB"),
    ("ErrRates a+b=1", lambda: ErrRates(alpha=0.5, beta=0.5), ValueError, "alpha + beta"),
    ("ErrRates a+b>1", lambda: ErrRates(alpha=0.6, beta=0.5), ValueError, "alpha + beta"),
    ("ErrRates alpha 0", lambda: ErrRates(alpha=0.0, beta=0.5), ValueError, "alpha"),
    ("ErrRates beta -1", lambda: ErrRates(alpha=0.1, beta=-1.0), ValueError, "beta"),
    ("ErrRates nan", lambda: ErrRates(alpha=float("nan"), beta=0.5), ValueError, "alpha"),
    ("from_tpr 1.5", lambda: ErrRates.from_tpr(alpha=0.1, tpr=1.5), ValueError, "tpr"),
    ("Advantage 0", lambda: Advantage(0.0), ValueError, "advantage"),
    ("Advantage 1", lambda: Advantage(1.0), ValueError, "advantage"),
    ("Epsilon eps<0", lambda: Epsilon(-1.0, 1e-5), ValueError, "epsilon"),
    ("Epsilon delta 0", lambda: Epsilon(1.0, 0.0), ValueError, "delta"),
    ("calibrate target", lambda: dpax.calibrate_dpsgd(sample_rate=0.01, num_steps=10, target=0.5), TypeError, "target"),
    ("calibrate rate", lambda: dpax.calibrate_dpsgd(sample_rate=2.0, num_steps=10, target=Advantage(0.1)),
     ValueError, "sample_rate"),
    ("calibrate steps", lambda: dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=0, target=Advantage(0.1)),
     ValueError, "num_steps"),
    ("calibrate grid",
     lambda: dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=Advantage(0.1), grid_step=-1.0),
     ValueError, "grid_step"),
]


@pytest.mark.parametrize("fn, exc, word", [pytest.param(f, e, w, id=i) for i, f, e, w in BAD_INPUTS])
def test_bad_input_raises_naming_the_argument(fn, exc, word):
    with pytest.raises(exc) as info:
        fn()
    assert word in str(info.value)


@pytest.fixture(scope="module")
def small_pl():
    # grid 1e-4 (1e-2 until 2026-11-27): the Gaussian of the float64 subprocess test at the end of
    # the file, which then loads the kernels the tests here compile (one support, a few kernels)
    return dpax.gaussian(1.0, grid_step=1e-4)


@pytest.mark.parametrize(
    "method, arg, word",
    [
        ("beta", -0.1, "alpha"),
        ("beta", 1.1, "alpha"),
        ("beta", float("nan"), "alpha"),
        ("beta", [0.1, 2.0], "alpha"),
        ("epsilon", -1e-5, "delta"),
        ("epsilon", 1.5, "delta"),
        ("epsilon", float("nan"), "delta"),
        ("delta", float("nan"), "epsilon"),
        ("delta", float("inf"), "epsilon"),
    ],
)
def test_bad_risk_arguments(small_pl, method, arg, word):
    with pytest.raises(ValueError, match=word):
        getattr(small_pl, method)(arg)


def test_compose_mixed_grid_steps_go_to_the_coarsest_and_rejects_non_losses(small_pl):
    other = dpax.gaussian(1.0, grid_step=1e-3)
    mixed = small_pl.compose(other)
    explicit = dpax.compose(small_pl, other, grid_step="coarsest")
    assert mixed.grid_step == explicit.grid_step == max(small_pl.grid_step, other.grid_step)
    alphas = [0.01, 0.1, 0.5]
    # one alpha a call (each is answered on its own): the one-query beta kernel that
    # tests/compat/test_compat.py compiles for this 28672-point support
    beta = lambda pl: np.array([pl.beta(a) for a in alphas])  # noqa: E731
    np.testing.assert_array_equal(beta(mixed), beta(explicit))
    # two unit Gaussians compose to mu = sqrt(2) GDP: regridding stays on the safe side
    exact = norm.cdf(norm.isf(alphas) - np.sqrt(2.0))
    assert np.all(beta(mixed) <= exact + 1e-12)
    assert np.all(beta(mixed) >= exact - 0.05)
    with pytest.raises(ValueError, match="grid_step"):
        dpax.compose(small_pl, other, grid_step="finest")
    with pytest.raises(TypeError):
        dpax.compose(small_pl, 3)
    with pytest.raises(ValueError):
        dpax.compose()


def test_edge_values_are_valid(small_pl):
    """alpha in {0, 1}, delta in {0, 1} are in range and give the obvious answers."""
    assert small_pl.beta(0.0) == pytest.approx(1.0, abs=1e-9)
    assert small_pl.beta(1.0) == pytest.approx(0.0, abs=1e-12)
    assert small_pl.epsilon(1.0) == 0.0
    assert small_pl.epsilon(0.0) == math.inf  # a Gaussian is not (eps, 0)-DP
    assert small_pl.delta(0.0) == pytest.approx(2 * 0.5 * (1 + math.erf(0.5 / math.sqrt(2))) - 1, abs=1e-6)


# --------------------------------------------------------------------------------------
# pytree and repr
# --------------------------------------------------------------------------------------


def test_privacy_loss_is_a_pytree():
    pl = dpax.dpsgd(1.0, 0.01, [10, 100], grid_step=1e-3)  # test_num_steps_broadcast's batch (its kernels)
    leaves, treedef = jax.tree_util.tree_flatten(pl)
    assert len(leaves) == 5
    assert all(np.shape(leaf)[:1] == (2,) for leaf in leaves)
    back = jax.tree_util.tree_unflatten(treedef, leaves)
    assert isinstance(back, dpax.PrivacyLoss)
    assert back.grid_step == pl.grid_step and back.batch_shape == (2,)
    # alpha 0.1 ([0.01, 0.1] until 2026-11-27): test_num_steps_broadcast's beta kernel
    np.testing.assert_array_equal(back.beta(0.1), pl.beta(0.1))
    # tree_map keeps the structure (e.g. moving arrays between devices)
    mapped = jax.tree_util.tree_map(lambda x: x, pl)
    np.testing.assert_array_equal(mapped.beta(0.1), pl.beta(0.1))
    # it passes through jit as an argument and as a result
    with jax.enable_x64(True):
        total = jax.jit(lambda p: jax.tree_util.tree_leaves(p)[1].sum(-1) + jax.tree_util.tree_leaves(p)[3])(pl)
        same = jax.jit(lambda p: p)(pl)
    np.testing.assert_allclose(np.asarray(total), 1.0, atol=1e-9)
    assert isinstance(same, dpax.PrivacyLoss)
    np.testing.assert_array_equal(same.beta(0.1), pl.beta(0.1))


def test_pmfs_are_probability_vectors():
    pl = dpax.dpsgd(1.0, 0.01, 100, grid_step=1e-3)
    px, py = np.asarray(pl.pmf_x), np.asarray(pl.pmf_y)
    assert px.dtype == np.float64 and py.dtype == np.float64
    assert np.all(px >= 0) and np.all(py >= 0)
    assert px.sum() + float(pl.neginf_mass_x) == pytest.approx(1.0, abs=1e-9)
    assert py.sum() + float(pl.inf_mass_y) == pytest.approx(1.0, abs=1e-9)
    x = pl.loss_values()
    assert x.shape == (pl.support_length,)
    np.testing.assert_allclose(np.diff(x), pl.grid_step, rtol=1e-9)
    assert x[0] == pytest.approx(int(pl.offset) * pl.grid_step)
    # Pr[X = x] = e^-x Pr[Y = x] where both are well above round-off
    big = (py > 1e-8) & (px > 1e-8)
    np.testing.assert_allclose(px[big], py[big] * np.exp(-x[big]), rtol=1e-6)


def test_repr_is_informative():
    r = repr(dpax.dpsgd(1.0, 0.01, 100, grid_step=1e-3))
    for word in ("PrivacyLoss", "dpsgd", "noise_multiplier=1", "sample_rate=0.01", "num_steps=100", "grid_step=0.001",
                 "support_length"):
        assert word in r, (word, r)
    rb = repr(dpax.dpsgd(1.0, 0.01, [10, 100], grid_step=1e-3))  # test_privacy_loss_is_a_pytree's batch
    assert "batch_shape=(2,)" in rb
    # 4 steps (10 until 2026-11-27): the composition (and FFT kernel) of
    # tests/test_gaussian_exact.py::test_self_compose_equals_repeated_compose
    rg = repr(dpax.gaussian(2.0, grid_step=1e-3).self_compose(4))
    assert "gaussian" in rg and "noise_multiplier=2" in rg and "x 4" in rg


# default siblings: tests/calibration/test_accuracy.py::test_without_accuracy_nothing_changes
# (compare_standard=False: grid_step, noise), tests/calibration/test_calibration_dpsgd.py
# (achieved["epsilon"]) and
# tests/cli/test_calibrate_command.py::test_calibrate_err_rates_meets_target (no comparison: standard noise NaN -> null)
@pytest.mark.slow
def test_calibration_result_fields():
    res = dpax.calibrate_dpsgd(sample_rate=0.01, num_steps=100, target=ErrRates(alpha=0.1, beta=0.5), grid_step=1e-2,
                               compare_standard=False)
    assert isinstance(res.noise_multiplier, float)
    assert set(res.achieved) >= {"beta", "advantage", "epsilon"}
    assert res.status == "calibrated"
    assert res.grid_step == 1e-2
    assert math.isnan(res.standard_noise_multiplier)


def test_user_built_privacy_loss_keeps_float64():
    """A PrivacyLoss assembled from NumPy arrays (x64 off) computes the same numbers."""
    import jax

    pl = dpax.gaussian(1.0, grid_step=1e-3)
    assert not jax.config.jax_enable_x64
    rebuilt = dpax.PrivacyLoss(pl.pmf_x, pl.pmf_y, pl.offset, pl.inf_mass_y, pl.neginf_mass_x, pl.grid_step)
    assert rebuilt.pmf_x.dtype == np.float64
    assert rebuilt.beta(1e-6) == pl.beta(1e-6)
    assert rebuilt.epsilon(1e-9) == pl.epsilon(1e-9)


# --------------------------------------------------------------------------------------
# a fresh interpreter: what `import dpax` loads, and float64 without touching the user's JAX
# configuration. Last in the file, so that the subprocesses load the kernels the tests above
# stored in the test run's kernel directory (they share it) instead of compiling them again
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fresh_interpreter():
    """One new interpreter for the two tests below (one start of Python, JAX and dpax, not
    two): it prints which optional modules `import dpax, dpax.cli.main` loaded before
    anything else is imported, then checks float64 without x64 and prints "ok"."""
    return _run_python(
        """
        import sys
        import jax
        assert not jax.config.jax_enable_x64
        import dpax
        on_use = sorted(m for m in ('scipy', 'dpax.accountants', 'dpax.audit', 'dpax.compat', 'dpax.distributed',
                                    'dpax.plot', 'dpax.sweep') if m in sys.modules)
        pl = dpax.gaussian(1.0, grid_step=1e-4)
        b = pl.beta(0.1)
        print("on use:", on_use, "scipy after a first answer:", 'scipy' in sys.modules)
        import dpax.cli.main
        print("modules:", sorted(m for m in ('matplotlib', 'yaml', 'tqdm', 'pandas', 'pyarrow', 'scipy.stats',
                                             'scipy.optimize', 'dp_accounting', 'torch') if m in sys.modules))
        assert not jax.config.jax_enable_x64, "import dpax flipped jax_enable_x64"
        import numpy as np
        from scipy.stats import norm
        assert not jax.config.jax_enable_x64, "a dpax call left jax_enable_x64 on"
        assert isinstance(b, float)
        arr = pl.beta([1e-6, 0.1])
        assert isinstance(arr, np.ndarray) and arr.dtype == np.float64, (type(arr), getattr(arr, "dtype", None))
        # float32 would be off by ~1e-7; the computation really is float64 (the grid-1e-4
        # discretisation error is ~5e-10)
        exact = norm.cdf(norm.isf(np.array([1e-6, 0.1])) - 1.0)
        assert np.max(np.abs(arr - exact)) < 5e-9, arr - exact
        assert isinstance(pl.advantage(), float) and isinstance(pl.epsilon(1e-5), float)
        # the user's own JAX code still computes in float32
        import jax.numpy as jnp
        assert jnp.ones(3).dtype == jnp.float32
        assert jnp.asarray(1.0).dtype == jnp.float32
        print("ok")
        """
    )


def test_import_loads_only_what_it_needs(fresh_interpreter):
    """`import dpax` and `dpax --help` cost little more than `import jax`: the optional and
    heavy modules load where they are used (plots, sweeps, progress bars, audits, interop).
    `import dpax` alone loads neither SciPy nor the use stage's subpackages (accountants,
    audit, compat, distributed, plot, sweep: loaded on first access), and a first beta of
    the Gaussian mechanism needs no SciPy."""
    lines = fresh_interpreter.stdout.splitlines()
    out = (fresh_interpreter.stdout, fresh_interpreter.stderr[-3000:])
    assert len(lines) >= 2 and lines[0] == "on use: [] scipy after a first answer: False", out
    assert lines[1] == "modules: []", out


def test_use_stage_subpackages_load_on_first_access():
    proc = _run_python(
        """
        import sys
        import dpax
        assert 'dpax.sweep' not in sys.modules and 'sweep' in dir(dpax)
        assert not {'importlib', '_importlib', '_typing', 'Any'} & set(dir(dpax))
        assert set(dpax.__all__) <= set(dir(dpax))
        assert dpax.sweep.run_sweep and 'dpax.sweep' in sys.modules
        from dpax import audit, compat
        import dpax.distributed
        assert audit.epsilon_star and compat.riskcal and dpax.distributed.calibrate
        try:
            dpax.no_such_name
        except AttributeError as exc:
            assert "no_such_name" in str(exc)
        else:
            raise AssertionError("dpax.no_such_name did not raise")
        print("ok")
        """
    )
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-3000:]


def test_import_does_not_enable_x64_and_results_are_float64(fresh_interpreter):
    proc = fresh_interpreter
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().endswith("ok")


def test_user_enabled_x64_stays_enabled():
    proc = _run_python(
        """
        import jax
        jax.config.update("jax_enable_x64", True)
        import dpax
        pl = dpax.dpsgd(1.0, 0.01, 100, grid_step=1e-3)  # test_num_steps_broadcast's single call
        pl.beta(0.1); pl.advantage(); pl.epsilon(1e-5)
        assert jax.config.jax_enable_x64, "dpax turned the user's x64 off"
        import jax.numpy as jnp
        assert jnp.ones(3).dtype == jnp.float64
        print("ok")
        """
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().endswith("ok")
