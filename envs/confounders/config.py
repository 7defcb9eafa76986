"""Configuration of the synthetic confounded images and of the stream over stages."""

from __future__ import annotations

import math
from dataclasses import dataclass

from gymforge.envs.confounders.schedules import PAPER_SHIFTS, validate_shifts

IMAGE_SIZE = 32  # images are IMAGE_SIZE x IMAGE_SIZE, four quadrants of IMAGE_SIZE // 2


def _check_int(name: str, value: object, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")


def _check_float(name: str, value: object, minimum: float, strict: bool = False) -> None:
    ok = (
        not isinstance(value, bool)
        and isinstance(value, (int, float))
        and math.isfinite(value)
        and (value > minimum if strict else value >= minimum)
    )
    if not ok:
        relation = ">" if strict else ">="
        raise ValueError(f"{name} must be a finite float {relation} {minimum}, got {value!r}")


@dataclass(frozen=True)
class SyntheticConfig:
    """The synthetic images of the reference (BR-Net / MDN / R-MDN recipe), generalised.

    Each 32x32 image holds the same Gaussian kernel in three 16x16 quadrants: top-left and
    bottom-right scaled by the main effect ``mf``, bottom-left by the confounder ``cf``; top-right
    stays empty; then Gaussian pixel noise. With ``u ~ U(0, 1)`` and the stage's shift ``s``:

    - group A (y = 0): ``cf = low + width*u - s``,          ``mf = low + width*u + s``;
    - group B (y = 1): ``cf = low + cf_gap + width*u + s``, ``mf = low + mf_gap + width*u - s``.

    The defaults give the reference's ``cf_A ~ U(3,5) - s``, ``cf_B ~ U(4,6) + s``,
    ``mf_A ~ U(3,5) + s``, ``mf_B ~ U(4,6) - s`` with N(0, 0.01) noise.

    Attributes:
        samples_per_group: images per group and stage (N; the reference uses 1024).
        confounder_gap: confounding strength, how far group B's confounder range starts above
            group A's at ``s = 0`` (0: the confounder is independent of the label at ``s = 0``).
        signal_gap: how far group B's main-effect range starts above group A's at ``s = 0``;
            the main-effect ranges overlap by ``width - signal_gap`` (signal overlap).
        width: width of every uniform range (> 0).
        low: lower end of group A's ranges at ``s = 0``.
        noise_std: standard deviation of the Gaussian pixel noise (>= 0).
    """

    samples_per_group: int = 1024
    confounder_gap: float = 1.0
    signal_gap: float = 1.0
    width: float = 2.0
    low: float = 3.0
    noise_std: float = 0.01

    def __post_init__(self) -> None:
        _check_int("samples_per_group", self.samples_per_group, 2)
        _check_float("confounder_gap", self.confounder_gap, 0.0)
        _check_float("signal_gap", self.signal_gap, 0.0)
        _check_float("width", self.width, 0.0, strict=True)
        _check_float("low", self.low, 0.0)
        _check_float("noise_std", self.noise_std, 0.0)

    @property
    def samples_per_stage(self) -> int:
        """Images per stage, both groups together (2N)."""
        return 2 * self.samples_per_group


@dataclass(frozen=True)
class StreamConfig:
    """How a stream walks through its stages.

    Attributes:
        shifts: the shift ``s`` of every stage, each in [0, 1] (see
            :func:`~gymforge.envs.confounders.schedules.shift_schedule`).
        batch_size: images per batch (the last incomplete batch of a pass is dropped, as in the
            reference's ``2N // batch_size`` iterations).
        passes_per_stage: how many times each stage's data is streamed (epochs), reshuffled each
            pass.
    """

    shifts: tuple[float, ...] = PAPER_SHIFTS
    batch_size: int = 128
    passes_per_stage: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "shifts", validate_shifts(self.shifts))
        _check_int("batch_size", self.batch_size, 1)
        _check_int("passes_per_stage", self.passes_per_stage, 1)

    @property
    def num_stages(self) -> int:
        return len(self.shifts)
