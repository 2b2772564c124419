"""``tfcloud.report()``: a tuning trial's metrics, written where Vertex AI's tuning service reads them.

One call from the training script (``tfcloud.report(val_accuracy=acc)``) appends a measurement to the
file named by ``CLOUD_ML_HP_METRIC_FILE``, as the ``cloudml-hypertune`` package does
(:func:`tfcloud.job.study.write_metric`), so the same script reports to tfcloud's local tuner and to a
Vertex AI HyperparameterTuningJob. Only the chief reports (the other replicas' calls do nothing), and once a
script has reported itself, the launcher's automatic reporting from Keras ``fit`` stops.

Light on purpose: no TensorFlow, nothing but the standard library and :mod:`tfcloud.job.study`.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path

from tfcloud.errors import ValidationError

__all__ = ["REPORTED_ENV", "is_chief", "report"]

#: Set in the process once the script has reported itself: the launcher's Keras callback then stays quiet.
REPORTED_ENV = "TFCLOUD_REPORTED"


def is_chief(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this replica reports: the chief (or master), worker 0 of a cluster without one, or a process
    without ``TF_CONFIG`` (a single replica)."""
    env = os.environ if environ is None else environ
    try:
        tf_config = json.loads(env.get("TF_CONFIG") or "{}")
    except ValueError:
        return True
    if not isinstance(tf_config, dict):
        return True
    task = tf_config.get("task") or {}
    kind = task.get("type")
    if kind in (None, "chief", "master"):
        return True
    cluster = tf_config.get("cluster") or {}
    return kind == "worker" and int(task.get("index", 0)) == 0 and not ({"chief", "master"} & set(cluster))


def report(*, step: int | None = None, **metrics: float) -> Path | None:
    """Report one measurement of a tuning trial: ``tfcloud.report(val_accuracy=0.93, step=epoch)``.

    The last value reported for the study's metric is the trial's result. Returns the metrics file written,
    or None on a replica other than the chief. Works outside a study too (the file then goes to
    cloudml-hypertune's default, ``/tmp/hypertune/output.metrics``)."""
    from tfcloud.job.study import write_metric

    if not metrics:
        raise ValidationError("report()", "at least one metric, e.g. report(val_accuracy=0.93)", "none")
    values: dict[str, float] = {}
    for name, value in metrics.items():
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValidationError(f"report({name}=...)", "a number", value) from None
        if not math.isfinite(number):
            raise ValidationError(f"report({name}=...)", "a finite number", value)
        values[name] = number
    if step is not None and (isinstance(step, bool) or not isinstance(step, int) or step < 0):
        raise ValidationError("report(step=...)", "an integer >= 0", step)
    os.environ[REPORTED_ENV] = "1"
    if not is_chief():
        return None
    return write_metric(values, step=step)
