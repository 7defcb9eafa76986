"""gymforge: Gymnasium-style environments and benchmarks from five recent ML papers.

Importing ``gymforge`` registers every id of :mod:`gymforge.registry` with Gymnasium, so
``gym.make("LineFlow-v0")`` works after ``import gymforge``, and ``gym.make("gymforge:LineFlow-v0")``
works without it.
"""

from importlib.metadata import PackageNotFoundError, version

from gymforge.registry import all_specs, get_spec, make_parallel, register_all

try:
    __version__ = version("gymforge")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0"

register_all()

__all__ = ["__version__", "all_specs", "get_spec", "make_parallel"]
