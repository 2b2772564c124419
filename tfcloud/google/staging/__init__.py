"""Stages that run on Google Cloud: Cloud Build, the package (sdist) staged in Cloud Storage, the base image of
build-free jobs."""
