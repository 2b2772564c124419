"""What a job's own code calls inside a replica: ``tfcloud.data()`` and ``tfcloud.report()``."""
