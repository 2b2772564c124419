"""The Google wing: everything that speaks Google, in five rooms: ``catalog`` (machines, prices, prebuilt images),
``rules`` (Google's documented rules as data), ``cloud`` (clients, gcloud's configuration, where a target reaches
Google Cloud), ``staging`` (Cloud Build, Cloud Storage packages, the no-build base image) and ``vertex`` (the
Vertex AI target)."""
