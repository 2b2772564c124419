"""Speaking to Google Cloud: clients, retries and the error table, gcloud's configuration, where a target reaches
it, what Cloud Storage reports of an object."""
