"""The entry point: a script or notebook made into what a replica runs (the launcher, the templates, the
requirements)."""
