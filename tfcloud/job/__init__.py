"""The gate: the user's arguments in, one frozen job spec out (its strategy, data sets, secrets, study, job id),
and the values the stages hand each other (artifacts)."""
