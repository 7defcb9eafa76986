"""The benchmark scripts: measurements whose recorded outputs live in ``benchmarks/results``.

One subpackage per family (``lineflow``, ``metabbo``, ``cmab``, ``confounders``, ``minmax``)
holds that family's scripts; the scripts that serve every family stay at the top (``common``,
the helpers the scripts share, ``claims``, ``readme_figures``, ``gpu_check``, ``sync_budget``,
``train_speed``, ``train_correctness``, ``verify_cross_machine``). Each module is one script with
a command-line interface (``--help`` lists its options), or one of the modules a long script is
split into. Run a script from the repository root as a module, so that ``benchmarks`` is
importable::

    python -m benchmarks.<family>.<name> [options]    # e.g. python -m benchmarks.lineflow.scalar
    python -m benchmarks.<name> [options]             # a top-level one, e.g. benchmarks.train_speed

Importing a module does no work: the measurement starts only under ``__main__``. This package is
a development tool, not part of the installed ``gymforge`` wheel.
"""
