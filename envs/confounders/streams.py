"""Iterable streams of ``(x, c, y, stage)`` batches for supervised continual-learning loops.

:class:`SyntheticStream` streams the reference's synthetic images stage by stage;
:class:`TensorStream` is the plug-in for a user's own dataset with confounder columns. Both walk
the stages in order, each for ``passes_per_stage`` shuffled passes, and also give a whole stage at
once through :meth:`ConfounderStream.stage_data` (for evaluation).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

import torch

from gymforge.core.devices import check_device
from gymforge.core.reset_seeds import validate_seed
from gymforge.envs.confounders.config import IMAGE_SIZE, StreamConfig, SyntheticConfig
from gymforge.envs.confounders.schedules import PAPER_SHIFTS
from gymforge.envs.confounders.synthetic import draw_base, effects, quadrant_templates, render


class Batch(NamedTuple):
    """One batch of a stream; unpacks as ``x, c, y, stage = batch``."""

    x: torch.Tensor  # (n, *sample_shape) float32 inputs
    c: torch.Tensor  # (n, k) float32 confounder columns
    y: torch.Tensor  # (n,) int64 labels
    stage: int  # index of the stage the batch belongs to


class ConfounderStream:
    """Base class: stages of ``(x, c, y)`` data streamed in shuffled batches.

    Subclasses implement :meth:`stage_data` and set ``num_stages``.

    Args:
        batch_size: samples per batch (>= 1).
        passes_per_stage: shuffled passes over each stage (>= 1).
        shuffle: shuffle within each pass; otherwise stream in stored order.
        drop_last: drop the last incomplete batch of each pass (the reference does, for training).
        seed: seed of the shuffling order.
    """

    num_stages: int

    def __init__(
        self,
        batch_size: int = 128,
        passes_per_stage: int = 1,
        shuffle: bool = True,
        drop_last: bool = True,
        seed: int = 0,
    ) -> None:
        StreamConfig(batch_size=batch_size, passes_per_stage=passes_per_stage)  # validates
        self.batch_size = batch_size
        self.passes_per_stage = passes_per_stage
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.seed = validate_seed(seed)

    def stage_data(self, stage: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """All of stage ``stage``'s samples: ``x`` (n, ...), ``c`` (n, k), ``y`` (n,)."""
        raise NotImplementedError

    def _check_stage(self, stage: int) -> None:
        if (
            isinstance(stage, bool)
            or not isinstance(stage, int)
            or not 0 <= stage < self.num_stages
        ):
            raise ValueError(f"stage must be an int in [0, {self.num_stages - 1}], got {stage!r}")

    def stage_batches(self, stage: int) -> Iterator[Batch]:
        """The batches of one stage: ``passes_per_stage`` passes, each reshuffled."""
        x, c, y = self.stage_data(stage)
        n = y.shape[0]
        generator = torch.Generator(device="cpu").manual_seed(self.seed * 1_000_003 + stage)
        for _ in range(self.passes_per_stage):
            order = torch.randperm(n, generator=generator) if self.shuffle else torch.arange(n)
            order = order.to(y.device)
            stop = n - n % self.batch_size if self.drop_last else n
            for start in range(0, stop, self.batch_size):
                idx = order[start : start + self.batch_size]
                yield Batch(x[idx], c[idx], y[idx], stage)

    def __iter__(self) -> Iterator[Batch]:
        for stage in range(self.num_stages):
            yield from self.stage_batches(stage)


class SyntheticStream(ConfounderStream):
    """The reference's synthetic stream: one dataset of ``2N`` images per stage shift.

    Every stage reuses the same random draws (as the reference reuses its seed); only the shift
    changes. The reference's validation data use ``seed + 1``: see :meth:`validation`.

    Args:
        config: the image recipe (:class:`SyntheticConfig`).
        shifts: shift ``s`` of every stage (default 0, 0.125, 0.25, 0.375, 0.5).
        seed: seed of the draws and of the shuffling.
        device: torch device the images are generated on.
        batch_size, passes_per_stage, shuffle, drop_last: see :class:`ConfounderStream`.

    Example:
        >>> stream = SyntheticStream(SyntheticConfig(samples_per_group=64), batch_size=32)
        >>> x, c, y, stage = next(iter(stream))
        >>> tuple(x.shape), tuple(c.shape), stage
        ((32, 1, 32, 32), (32, 1), 0)
    """

    def __init__(
        self,
        config: SyntheticConfig | None = None,
        shifts: Sequence[float] = PAPER_SHIFTS,
        seed: int = 0,
        device: torch.device | str = "cpu",
        batch_size: int = 128,
        passes_per_stage: int = 1,
        shuffle: bool = True,
        drop_last: bool = True,
    ) -> None:
        super().__init__(batch_size, passes_per_stage, shuffle, drop_last, seed)
        self.config = config if config is not None else SyntheticConfig()
        self.shifts = StreamConfig(shifts=tuple(shifts)).shifts
        self.num_stages = len(self.shifts)
        self.device = check_device(device)
        generator = torch.Generator(device=self.device).manual_seed(self.seed)
        self.base = draw_base(self.config, generator, self.device)
        self._templates = quadrant_templates(self.device)

    def validation(self) -> SyntheticStream:
        """The held-out stream of the reference: same recipe, ``seed + 1``, no shuffling."""
        return SyntheticStream(
            self.config,
            self.shifts,
            self.seed + 1,
            self.device,
            self.batch_size,
            1,
            shuffle=False,
            drop_last=False,
        )

    def stage_effects(self, stage: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The confounder ``cf`` and main effect ``mf`` (2N,) of every sample of ``stage``."""
        self._check_stage(stage)
        return effects(self.config, self.base.u_cf, self.base.u_mf, self.base.y, self.shifts[stage])

    def stage_data(self, stage: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        cf, mf = self.stage_effects(stage)
        images = render(self.config, self._templates, cf, mf, self.base.noise)
        x = images.reshape(-1, 1, IMAGE_SIZE, IMAGE_SIZE)
        return x, cf[:, None], self.base.y


class TensorStream(ConfounderStream):
    """Plug-in for a user's own data: tensors ``x``, confounders ``c``, labels ``y`` and ``stage``.

    Stages are streamed in increasing order of their ``stage`` value.

    Args:
        x: inputs (n, ...), any float shape per sample.
        c: confounders (n,) or (n, k), float.
        y: integer labels (n,).
        stage: stage id of every sample (n,), integers.
        batch_size, passes_per_stage, shuffle, drop_last, seed: see :class:`ConfounderStream`.
    """

    def __init__(
        self,
        x: torch.Tensor,
        c: torch.Tensor,
        y: torch.Tensor,
        stage: torch.Tensor,
        batch_size: int = 128,
        passes_per_stage: int = 1,
        shuffle: bool = True,
        drop_last: bool = False,
        seed: int = 0,
    ) -> None:
        super().__init__(batch_size, passes_per_stage, shuffle, drop_last, seed)
        tensors = {"x": x, "c": c, "y": y, "stage": stage}
        for name, value in tensors.items():
            if not isinstance(value, torch.Tensor):
                raise ValueError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
        n = x.shape[0] if x.dim() > 0 else 0
        if n == 0:
            raise ValueError("x must hold at least one sample along dimension 0")
        for name, value in tensors.items():
            if value.dim() == 0 or value.shape[0] != n:
                raise ValueError(
                    f"{name} must have {n} rows (as many as x), got shape {tuple(value.shape)}"
                )
        if c.dim() not in (1, 2):
            raise ValueError(f"c must have shape (n,) or (n, k), got {tuple(c.shape)}")
        for name in ("y", "stage"):
            value = tensors[name]
            if value.dim() != 1 or value.dtype.is_floating_point or value.dtype == torch.bool:
                raise ValueError(
                    f"{name} must be a 1-D integer tensor, got {value.dtype} {tuple(value.shape)}"
                )
        for name, value in (("x", x), ("c", c)):
            if not value.dtype.is_floating_point or not bool(torch.isfinite(value).all()):
                raise ValueError(f"{name} must be a finite float tensor")
        self.x = x
        self.c = c[:, None] if c.dim() == 1 else c
        self.y = y.long()
        self.stage_ids = torch.unique(stage).tolist()
        self._stage = stage
        self.num_stages = len(self.stage_ids)

    def stage_data(self, stage: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        self._check_stage(stage)
        mask = self._stage == self.stage_ids[stage]
        return self.x[mask], self.c[mask].to(self.x.dtype), self.y[mask]
