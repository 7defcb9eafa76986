"""The benchmark scripts: measurements whose recorded outputs live in ``benchmarks/results``.

Each module here is one script with a command-line interface (``--help`` lists its options), plus
``common`` (helpers the scripts share) and a few modules a long script is split into. Run a
script from the repository root as a module, so that ``benchmarks`` is importable::

    python -m benchmarks.<name> [options]

Importing a module does no work: the measurement starts only under ``__main__``. This package is
a development tool, not part of the installed ``gymforge`` wheel.
"""
