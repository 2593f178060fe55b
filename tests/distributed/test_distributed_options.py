"""dpax.distributed.calibrate_dpsgd refuses options that would let processes disagree."""

import pytest

import dpax


def test_accuracy_is_refused_with_a_message_naming_it():
    with pytest.raises(ValueError, match="accuracy is not supported.*grid_step"):
        dpax.distributed.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=dpax.targets.Advantage(0.3),
                                         accuracy=1e-3)
