"""Min-max games: two-player games (PettingZoo) and heavy-ball momentum step-size tuning."""
