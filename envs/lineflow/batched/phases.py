"""Phases of a station row in the batched LineFlow engine (int8 codes). Station programs follow
the SimPy engine (``sim_stations.py``); every row is in one phase:

| phase | meaning | ends |
|---|---|---|
| START | between cycles (a switch checks its input, a magazine starts fetching) | at once |
| WAIT | a source's waiting time | timer |
| GET_WAIT / GETTING | wait for a carrier in the last slot of ``cur_in``, take it (``get_time``) | condition / timer |
| COMP_WAIT / COMP_GETTING | the same for an assembly's k-th component buffer | condition / timer |
| FAILING | an assembly scrapping an invalid component (``nok_part_error_time``) | timer |
| WORKING | processing: ``T·factor + Exp(scale)``, ×2 on rework | timer |
| OUT_CHECK | a switch checks its selected output is not full | at once |
| PUT_WAIT / PUTTING | wait for the first slot of ``cur_out``, put the carrier on | condition / timer |
| IN_POLL / OUT_POLL | a switch looks again after ``poll_interval`` | timer |
| FETCH / MAG_POLL | a magazine's getting time / its wait for a stored carrier | timer |
| HANDLING | a sequential process takes the carrier in (``handling_time``) | timer |
| SEQ_NEXT | a sequential process turns to its next part (or puts the carrier on) | at once |
| SEQ_ERROR | a sequential process handles a part's error (``error_time + Exp``) | timer |

"""

from __future__ import annotations

(
    START, WAIT, GET_WAIT, GETTING, COMP_WAIT, COMP_GETTING, FAILING, WORKING,
    OUT_CHECK, PUT_WAIT, PUTTING, IN_POLL, OUT_POLL, FETCH, MAG_POLL,
    HANDLING, SEQ_NEXT, SEQ_ERROR,
) = range(18)  # fmt: skip


N_PHASES = 18
