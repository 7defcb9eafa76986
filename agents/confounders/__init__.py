"""Confounder-stream reference model: the R-MDN layer and learners built with it."""
