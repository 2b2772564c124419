"""The image stage: a job's build context, its Dockerfile and the builders that make an image of it."""
