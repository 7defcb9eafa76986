"""Min-max baselines: plain GDA, extragradient, optimistic GDA."""
