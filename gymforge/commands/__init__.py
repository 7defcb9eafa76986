"""Subcommands of ``gymforge`` beyond list/info/rollout, one module each.

Every module here defines ``register(subparsers)``, which adds its parser(s) and sets
``func`` (``args -> exit code``). :func:`gymforge.cli.build_parser` discovers the modules, so a
new command is one new file. Modules import their heavy dependencies inside the command
functions, so ``gymforge list`` stays fast.
"""
