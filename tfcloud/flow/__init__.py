"""The sequence of stages: settings resolved, where a call goes, the gate (validate), the plan of a submission,
the pipeline that carries it out, doctor, the cluster functions."""
