"""What both ``gymforge train`` backends share, without importing either trainer's library.

- :mod:`.seeds` — the training and held-out evaluation seed ranges;
- :mod:`.evaluation` — held-out episodes over the shared episode loop;
- :mod:`.files` — YAML/JSON reading with size and alias limits;
- :mod:`.config` — the config schema, its layers and command-line overrides;
- :mod:`.runs` — run folders: default place, fresh-or-resume checks, atomic JSON, the record;
- :mod:`.checkpoints` — checkpoint folders and the step schedules of evaluations and checkpoints;
- :mod:`.cli` — the options and the result report both ``gymforge train`` trainers print.

The SB3 backend (:mod:`gymforge.baselines.sb3`) and the on-device trainer
(:mod:`gymforge.baselines.ondevice`) each build on these; importing this package loads neither
Stable-Baselines3 nor sb3-contrib.
"""
