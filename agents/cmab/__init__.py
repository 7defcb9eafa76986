"""Off-CMAB reference solvers: CLCB and its oracles."""
