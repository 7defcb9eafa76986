"""Batched torch engine for LineFlow: B lines at once on CPU or GPU, compiled from a LineSpec."""
