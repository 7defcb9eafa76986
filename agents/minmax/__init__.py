"""Min-max reference solvers: simultaneous and alternating heavy-ball GDA, ODE models, spectral radii."""
