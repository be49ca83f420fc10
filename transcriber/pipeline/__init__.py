"""The pipeline: step actors, the step contract and the steps themselves."""
