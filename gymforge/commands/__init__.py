"""Subcommands of ``gymforge`` beyond list/info/rollout, one module each.

Every module here defines ``register(subparsers)``, which adds its parser(s) and sets
``func`` (``args -> exit code``). A parser that sets ``passthrough=True`` receives the options
it does not know in ``args.options`` (for family-specific options parsed downstream); others
reject unknown options. :func:`gymforge.cli.build_parser` discovers the modules, so a
new command is one new file. Modules import their heavy dependencies inside the command
functions, so ``gymforge list`` stays fast.
"""


def plain(text: str) -> str:
    """``text`` without the docstrings' inline-code markup, for help and descriptions."""
    return text.replace("``", "").replace("`", "")
