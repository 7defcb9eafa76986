"""jDE- and SHADE-style parameter adaptation as policies acting on ``MetaBBO`` envs.

The env's action sets one value per hyperparameter per instance and generation, so the classic
self-adaptive DEs are expressed at that level: the feedback is whether (and by how much) the
generation improved the best-so-far value, instead of per-individual trial success. Each
sub-population's ``F1``, ``F2`` and ``Cr`` adapt independently; a bound-handling choice stays at
``clip``; a controlled migration probability stays at the preset default; a PSO preset has no
``F``/``Cr``, so there both agents play the preset's default action. A new episode (the
remaining-budget feature back at 1) restarts an instance's adaptation.

- :class:`JDEAgent` (after Brest et al., 2006, "jDE"): each generation, with probability
  ``tau_f = 0.1`` a new ``F ~ U[0.1, 1]`` is tried and with probability ``tau_cr = 0.1`` a new
  ``Cr ~ U[0, 1]``; a tried value is kept if that generation improved the best value, otherwise
  the last successful value returns.
- :class:`SHADEAgent` (after Tanabe & Fukunaga, 2013, "SHADE"): a memory of ``H = 5`` pairs
  ``(M_F, M_Cr)``, all 0.5 at the start; each generation draws a slot ``r``,
  ``F ~ Cauchy(M_F[r], 0.1)`` (redrawn while ``<= 0``, at most 1) and
  ``Cr ~ N(M_Cr[r], 0.1)`` clipped to ``[0, 1]``. Generations that improve the best value add
  ``(F, Cr)`` with weight ``w = `` the error decrease (from ``info["best_error"]``; weight 1
  when the info is missing); every ``window = 10`` generations with successes, slot ``k``
  becomes the weighted Lehmer mean of the successful ``F`` and the weighted mean of ``Cr``, and
  ``k`` moves on cyclically.

Values are rounded to the nearest of the 16 action bins. Both agents use one numpy generator
seeded by :meth:`reset`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gymforge.baselines.metabbo.common import (
    IMPROVED,
    REMAINING_BUDGET,
    as_batch,
    env_preset,
    to_bin,
    unbatch,
)

__all__ = ["JDEAgent", "SHADEAgent"]


class _Adaptive:
    """Shared bookkeeping: which action dimensions are F-like, Cr-like or fixed."""

    def __init__(self, env: Any) -> None:
        self.preset = env_preset(env)
        hps = self.preset.hyperparameters
        self.f_dims = np.array(
            [k for k, h in enumerate(hps) if h.key in ("F1", "F2")], dtype=np.int64
        )
        self.cr_dims = np.array([k for k, h in enumerate(hps) if h.key == "Cr"], dtype=np.int64)
        self.fixed = np.array(self.preset.default_action(), dtype=np.int64)
        self.rng = np.random.default_rng()
        self.batch = 0

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self.batch = 0

    def _compose(self, f: np.ndarray, cr: np.ndarray) -> np.ndarray:
        action = np.tile(self.fixed, (f.shape[0], 1))
        action[:, self.f_dims] = to_bin(f)
        action[:, self.cr_dims] = to_bin(cr)
        return action

    def _starts(self, obs: np.ndarray) -> np.ndarray:
        """Instances at an episode's start (or all, on a new batch size)."""
        if obs.shape[0] != self.batch:
            self.batch = obs.shape[0]
            self._init(self.batch)
            return np.ones(self.batch, dtype=bool)
        return obs[:, REMAINING_BUDGET] >= 1.0

    def _init(self, b: int) -> None:
        raise NotImplementedError


class JDEAgent(_Adaptive):
    """jDE-style adaptation (see the module docstring)."""

    def __init__(self, env: Any, tau_f: float = 0.1, tau_cr: float = 0.1) -> None:
        super().__init__(env)
        self.tau_f, self.tau_cr = tau_f, tau_cr

    def _init(self, b: int) -> None:
        self.f_ok = np.full((b, len(self.f_dims)), 0.5)
        self.cr_ok = np.full((b, len(self.cr_dims)), 0.9)
        self.f_try, self.cr_try = self.f_ok.copy(), self.cr_ok.copy()

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> np.ndarray:
        obs, single = as_batch(observation)
        start = self._starts(obs)
        improved = (obs[:, IMPROVED] > 0.5) & ~start
        # keep what was tried if it helped, else fall back to the last success
        self.f_ok = np.where(improved[:, None], self.f_try, self.f_ok)
        self.cr_ok = np.where(improved[:, None], self.cr_try, self.cr_ok)
        self.f_ok[start], self.cr_ok[start] = 0.5, 0.9
        new_f = self.rng.random(self.f_ok.shape) < self.tau_f
        new_cr = self.rng.random(self.cr_ok.shape) < self.tau_cr
        f_try = np.where(new_f, 0.1 + 0.9 * self.rng.random(self.f_ok.shape), self.f_ok)
        cr_try = np.where(new_cr, self.rng.random(self.cr_ok.shape), self.cr_ok)
        self.f_try, self.cr_try = to_bin(f_try) / 15.0, to_bin(cr_try) / 15.0  # what is applied
        return unbatch(self._compose(self.f_try, self.cr_try), single)


class SHADEAgent(_Adaptive):
    """SHADE-style success-history adaptation (see the module docstring)."""

    def __init__(self, env: Any, memory: int = 5, window: int = 10) -> None:
        super().__init__(env)
        self.memory, self.window = memory, window

    def _init(self, b: int) -> None:
        nf, ncr = len(self.f_dims), len(self.cr_dims)
        self.m_f = np.full((b, self.memory, nf), 0.5)
        self.m_cr = np.full((b, self.memory, ncr), 0.5)
        self.slot = np.zeros(b, dtype=np.int64)
        self.f_last = np.full((b, nf), 0.5)
        self.cr_last = np.full((b, ncr), 0.5)
        self.s_f = np.zeros((b, nf))  # sum w F^2
        self.s_f1 = np.zeros((b, nf))  # sum w F
        self.s_cr = np.zeros((b, ncr))  # sum w Cr
        self.s_w = np.zeros(b)  # sum w
        self.since = np.zeros(b, dtype=np.int64)
        self.err_last = np.full(b, np.nan)

    def _restart(self, mask: np.ndarray) -> None:
        self.m_f[mask], self.m_cr[mask], self.slot[mask] = 0.5, 0.5, 0
        self.s_f[mask], self.s_f1[mask], self.s_cr[mask], self.s_w[mask] = 0, 0, 0, 0
        self.since[mask], self.err_last[mask] = 0, np.nan

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> np.ndarray:
        obs, single = as_batch(observation)
        start = self._starts(obs)
        b = obs.shape[0]
        err = np.asarray((info or {}).get("best_error", np.full(b, np.nan)), dtype=np.float64)
        err = err.reshape(-1) if err.size == b else np.full(b, np.nan)
        improved = (obs[:, IMPROVED] > 0.5) & ~start
        gain = np.where(np.isfinite(self.err_last - err), self.err_last - err, 1.0)
        w = np.where(improved, np.maximum(gain, 1e-300), 0.0)
        self.s_f += w[:, None] * self.f_last**2
        self.s_f1 += w[:, None] * self.f_last
        self.s_cr += w[:, None] * self.cr_last
        self.s_w += w
        self.since += 1
        update = (self.since >= self.window) & (self.s_w > 0)
        rows = np.nonzero(update)[0]
        if rows.size:
            k = self.slot[rows]
            self.m_f[rows, k] = self.s_f[rows] / np.maximum(self.s_f1[rows], 1e-300)
            self.m_cr[rows, k] = self.s_cr[rows] / self.s_w[rows, None]
            self.slot[rows] = (k + 1) % self.memory
            self.s_f[rows], self.s_f1[rows], self.s_cr[rows], self.s_w[rows] = 0, 0, 0, 0
        self.since[self.since >= self.window] = 0
        self._restart(start)
        self.err_last = np.where(start, np.nan, err)
        r = self.rng.integers(self.memory, size=b)
        mu_f = self.m_f[np.arange(b), r]
        mu_cr = self.m_cr[np.arange(b), r]
        f = mu_f + 0.1 * np.tan(np.pi * (self.rng.random(mu_f.shape) - 0.5))
        for _ in range(10):  # redraw non-positive F (Cauchy tails), then clip what is left
            bad = f <= 0
            if not bad.any():
                break
            f = np.where(bad, mu_f + 0.1 * np.tan(np.pi * (self.rng.random(mu_f.shape) - 0.5)), f)
        f = np.clip(f, 1.0 / 15.0, 1.0)
        cr = np.clip(self.rng.normal(mu_cr, 0.1), 0.0, 1.0)
        self.f_last, self.cr_last = to_bin(f) / 15.0, to_bin(cr) / 15.0  # what is applied
        return unbatch(self._compose(f, cr), single)
