# Adapted from gdpnum 0.1.2, tests/test_dpsgd.py (https://github.com/Felipe-Gomez/gdp-numeric),
# MIT License, Copyright (c) 2025 Felipe-Gomez. Only the import lines are changed: the suite
# runs against dpax.compat.gdpnum exactly as gdpnum's users would call it.
import pytest

import dpax.compat.gdpnum as gdpnum

grid_step = 1e-3
noise_multiplier = 9.4
sample_rate = 2**14 / 50_000
num_steps = 2_000

real_mu = 1.567013
regret_bound = 1e-2


@pytest.fixture
def accountant():
    yield gdpnum.dpsgd.CTDAccountant


def test_get_mu_and_regret_for_dpsgd():
    mu, regret = gdpnum.dpsgd.get_mu_and_regret_for_dpsgd(
        noise_multiplier=noise_multiplier,
        sample_rate=sample_rate,
        num_steps=num_steps,
        grid_step=grid_step,
    )

    assert mu == pytest.approx(real_mu, abs=1e-2)
    assert regret <= regret_bound


@pytest.mark.slow  # ~2 s; default siblings: tests/compat/test_compat.py::test_gdpnum_ctd_accountant (the same 2000
# steps: mu, regret and get_beta against gdpnum's own accountant) and test_get_mu_and_regret_for_dpsgd (mu and regret)
def test_accountant():
    acct = gdpnum.dpsgd.CTDAccountant()
    for _ in range(num_steps):
        acct.step(noise_multiplier=noise_multiplier, sample_rate=sample_rate)

    mu, regret = acct.get_mu_and_regret(grid_step=grid_step)

    assert mu == pytest.approx(real_mu, abs=1e-2)
    assert regret <= regret_bound

    assert len(acct.get_beta()) == 8
