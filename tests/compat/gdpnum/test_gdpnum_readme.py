"""gdpnum 0.1.2's README code blocks (https://github.com/Felipe-Gomez/gdp-numeric, MIT
License, Copyright (c) 2025 Felipe-Gomez), run with ``import gdpnum`` changed to
``import dpax.compat.gdpnum as gdpnum``. The README's ``pld = ...`` placeholder is filled in
with a dp-accounting PLD; its printed result for DP-SGD is checked against gdpnum's own
figures (mu 1.5686 from dp-accounting's PLD; dpax's exact construction gives 1.5669, and
regret ~0.001)."""

import pytest

import dpax.compat.gdpnum as gdpnum


@pytest.mark.slow  # ~5 s (grid 1e-4, p 0.328: kernels of its own); default siblings: tests/compat/test_compat.py::
# test_mu_and_regret_for_dpsgd[cfg0] (the same call on the same DP-SGD, p 16384 / 50000, against gdpnum itself) and
# test_gdpnum_dpsgd.py::test_get_mu_and_regret_for_dpsgd (the same call with these keywords: mu 1.567, regret <= 1e-2)
def test_dpsgd_block():
    mu, regret = gdpnum.dpsgd.get_mu_and_regret_for_dpsgd(
        noise_multiplier=9.4,
        sample_rate=0.328,
        num_steps=2000
    )
    # (1.5685621993129137, 0.0010208130697719753) in gdpnum's README
    assert mu == pytest.approx(1.5686, abs=2e-3)
    assert 0.0 <= regret <= 2e-3


def test_accountant_block():
    acct = gdpnum.dpsgd.CTDAccountant()
    acct.step(noise_multiplier=9.4, sample_rate=0.328)
    mu, regret = acct.get_mu_and_regret()
    assert 0.0 < mu < 0.2 and regret >= 0.0


@pytest.mark.slow  # ~2 s; default siblings: test_gdpnum_converter.py::test_gaussian_converter_has_no_regret[1.0]
# (the same PLD, from_gaussian_mechanism(1.0): mu 1, regret < 1e-4) and test_get_beta[1.0] (its 8 default FPRs)
def test_general_mechanism_block():
    from dp_accounting.pld.privacy_loss_distribution import from_gaussian_mechanism

    pld = from_gaussian_mechanism(1.0)

    converter = gdpnum.PLDConverter(pld)
    mu, regret = converter.get_mu_and_regret()
    assert mu == pytest.approx(1.0, abs=1e-4) and regret < 1e-4
    beta = converter.get_beta()
    assert len(beta) == 8
