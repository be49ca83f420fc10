"""The HTTP door: the web app's API, its assets and the operator endpoints."""
