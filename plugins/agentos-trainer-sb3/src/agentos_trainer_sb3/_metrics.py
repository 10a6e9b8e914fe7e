"""SB3's training metrics (losses, entropy, learning rate, fps...) to AgentOS's trackers.

SB3 gathers them in its logger and writes them out once per rollout (on-policy) or every
``log_interval`` episodes (off-policy). :func:`reporting_logger` gives a model a logger whose one output
hands each dump to :func:`agentos.plugin_api.report_metrics` (TensorBoard, MLflow and the run folder's
``metrics.csv``), at the run's step; SB3's own console table stays when ``verbose`` is 1 or more.
"""

from __future__ import annotations

import numbers
import sys

from agentos.plugin_api import report_metrics


def reporting_logger(verbose: int, steps_before):
    """An SB3 ``Logger`` that reports to the run; ``steps_before()`` is the model's step count when this
    training call began (SB3's steps continue across calls, the run's start at 0)."""
    from stable_baselines3.common.logger import HumanOutputFormat, KVWriter, Logger

    class ToRun(KVWriter):
        def write(self, key_values, key_excluded, step=0):
            values = {key: value for key, value in key_values.items()
                      if isinstance(value, numbers.Real) and "tensorboard" not in (key_excluded.get(key) or ())}
            report_metrics(values, step=max(int(step) - steps_before(), 0))

        def close(self):
            return None

    outputs = [ToRun()]
    if verbose >= 1:
        outputs.append(HumanOutputFormat(sys.stdout))
    return Logger(folder=None, output_formats=outputs)
