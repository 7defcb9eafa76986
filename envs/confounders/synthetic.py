"""The synthetic confounded images: a Gaussian kernel in three quadrants, scaled by mf and cf.

Generation is split in two so that stages can share their random draws, as in the reference
(every stage is generated from the same seed, only the shift changes):

- :func:`draw_base` draws the uniforms and the pixel noise of ``2N`` samples once;
- :func:`render` turns them into images for one shift ``s`` with a single matrix product.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from gymforge.envs.confounders.config import IMAGE_SIZE, SyntheticConfig


def gaussian_kernel(size: int = IMAGE_SIZE // 2, nsig: float = 5.0) -> torch.Tensor:
    """A ``size x size`` Gaussian kernel summing to 1 (float64).

    The 1-D profile is the normal probability mass of ``size`` equal bins spanning
    ``[-nsig - h/2, nsig + h/2]`` with ``h = (2 nsig + 1) / size``; the 2-D kernel is the square
    root of the outer product of that profile with itself, normalised to sum 1.
    """
    interval = (2.0 * nsig + 1.0) / size
    edges = torch.linspace(
        -nsig - interval / 2.0, nsig + interval / 2.0, size + 1, dtype=torch.float64
    )
    profile = torch.diff(torch.special.ndtr(edges))
    raw = torch.sqrt(torch.outer(profile, profile))
    return raw / raw.sum()


def quadrant_templates(device: torch.device | str = "cpu") -> torch.Tensor:
    """Two flattened templates (2, 1024) float32: row 0 scales with mf, row 1 with cf.

    Kernel values below 1e-30 (the kernel's far tails reach 1e-40) are set to 0: they would be
    subnormal floats, which make CPU arithmetic many times slower, and they are 28 orders of
    magnitude below the pixel noise.
    """
    half = IMAGE_SIZE // 2
    kernel = gaussian_kernel(half)
    templates = torch.zeros(2, IMAGE_SIZE, IMAGE_SIZE, dtype=torch.float64)
    templates[0, :half, :half] = kernel  # top-left: main effect
    templates[0, half:, half:] = kernel  # bottom-right: main effect
    templates[1, half:, :half] = kernel  # bottom-left: confounder
    templates = torch.where(templates.abs() < 1e-30, 0.0, templates)
    return templates.reshape(2, -1).to(device=device, dtype=torch.float32)


@dataclass
class SyntheticBase:
    """The shift-independent random draws of ``2N`` samples (optionally with leading batch dims).

    Samples ``0..N-1`` are group A (y = 0), samples ``N..2N-1`` group B (y = 1).
    """

    u_cf: torch.Tensor  # (..., 2N) float32 in [0, 1), the confounder's uniform
    u_mf: torch.Tensor  # (..., 2N) float32 in [0, 1), the main effect's uniform
    noise: torch.Tensor  # (..., 2N, 1024) float32 standard normal pixel noise (unscaled)
    y: torch.Tensor  # (..., 2N) int64 group labels


def draw_base(
    config: SyntheticConfig, generator: torch.Generator, device: torch.device | str = "cpu"
) -> SyntheticBase:
    """Draw the base of one dataset from ``generator`` (which must live on ``device``)."""
    n = config.samples_per_stage
    u_cf = torch.rand(n, generator=generator, device=device)
    u_mf = torch.rand(n, generator=generator, device=device)
    noise = torch.randn(n, IMAGE_SIZE * IMAGE_SIZE, generator=generator, device=device)
    y = (torch.arange(n, device=device) >= config.samples_per_group).long()
    return SyntheticBase(u_cf=u_cf, u_mf=u_mf, noise=noise, y=y)


def effects(
    config: SyntheticConfig,
    u_cf: torch.Tensor,
    u_mf: torch.Tensor,
    y: torch.Tensor,
    shift: torch.Tensor | float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The confounder ``cf`` and main effect ``mf`` (same shape as ``y``) at ``shift``.

    ``shift`` broadcasts against ``y`` (a float or a tensor, e.g. one shift per instance).
    """
    b = y.to(u_cf.dtype)
    sign = 2.0 * b - 1.0  # -1 for group A, +1 for group B
    cf = config.low + config.width * u_cf + b * config.confounder_gap + sign * shift
    mf = config.low + config.width * u_mf + b * config.signal_gap - sign * shift
    return cf, mf


def render(
    config: SyntheticConfig,
    templates: torch.Tensor,
    cf: torch.Tensor,
    mf: torch.Tensor,
    noise: torch.Tensor,
) -> torch.Tensor:
    """Flattened images (..., 1024) = mf * main template + cf * confounder template + noise."""
    lead = cf.shape
    weights = torch.stack([mf, cf], dim=-1).reshape(-1, 2)
    flat = noise.reshape(-1, noise.shape[-1])
    out = torch.addmm(flat, weights, templates, beta=config.noise_std)
    return out.reshape(*lead, templates.shape[-1])
