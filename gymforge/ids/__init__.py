"""The id tables, one module per family (``gymforge/ids/<family>.py``, each with ``SPECS``).

Pure data and torch-free: :mod:`gymforge.registry` discovers every module here, so a new family
adds its ids by adding one file, and nothing else keeps a list of them. ``ORDER`` (optional, an
int) places a family in listings; families without one come after, by name.
"""
