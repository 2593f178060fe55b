"""A training run and a release described as dp-accounting DpEvents, accounted by dpax.

DP-SGD on 60,000 records with batches of about 600 (sample rate 0.01) for 3,000 steps, the
noise lowered every 1,000 steps (a noise schedule), then the count of a sensitive attribute
released with Laplace noise of scale 20. One ``DpEventAccountant`` (dp-accounting's
``PrivacyAccountant`` interface, as TensorFlow Privacy and JAX Privacy drive it) takes the
events as they happen and answers epsilon, the attack risk beta at FPR 1%, and mu.

    .venv/bin/python examples/dp_events.py               # grid 1e-4, a few seconds
    .venv/bin/python examples/dp_events.py --grid 1e-3   # coarser and faster
"""

from __future__ import annotations

import argparse
import json

from dp_accounting import dp_event

from dpax.accountants import DpEventAccountant

#: (noise multiplier, steps) of the schedule
SCHEDULE = ((1.2, 1000), (1.0, 1000), (0.9, 1000))
SAMPLE_RATE = 0.01
LAPLACE_SCALE = 20.0
DELTA = 1e-5
ALPHA = 0.01


def account(grid_step: float = 1e-4) -> dict:
    """Feed the run's events to one accountant, one event per training step; its answers."""
    acct = DpEventAccountant(value_discretization_interval=grid_step)
    for noise, steps in SCHEDULE:
        step = dp_event.PoissonSampledDpEvent(SAMPLE_RATE, dp_event.GaussianDpEvent(noise))
        for _ in range(steps):
            acct.compose(step)  # counted only: composed once, at the first question
    acct.compose(dp_event.LaplaceDpEvent(LAPLACE_SCALE))
    mu, regret = acct.get_mu_and_regret()
    return {
        "events": sum(steps for _, steps in SCHEDULE) + 1,
        "epsilon": float(acct.get_epsilon(DELTA)),
        "delta": DELTA,
        "beta_at_fpr_1pct": float(acct.get_beta(ALPHA)),
        "advantage": float(acct.get_advantage()),
        "mu": float(mu),
        "regret": float(regret),
        "grid_step": grid_step,
    }


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--grid", type=float, default=1e-4, help="the loss grid's step (default 1e-4)")
    parser.add_argument("--json", action="store_true", help="print the answers as JSON")
    args = parser.parse_args(argv)
    out = account(args.grid)
    if args.json:
        print(json.dumps(out))
    else:
        print(f"{out['events']:,} events (DP-SGD, noise schedule {[s for s, _ in SCHEDULE]}; a Laplace release)")
        print(f"epsilon at delta {DELTA:g}: {out['epsilon']:.3f}")
        print(f"an attack with FPR 1% has FNR at least {out['beta_at_fpr_1pct']:.4f} "
              f"(TPR at most {1 - out['beta_at_fpr_1pct']:.4f})")
        print(f"advantage {out['advantage']:.4f}; mu-GDP {out['mu']:.3f} (regret {out['regret']:.1e})")
    return out


if __name__ == "__main__":
    main()
