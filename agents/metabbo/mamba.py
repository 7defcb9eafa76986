"""A selective state-space block (Mamba-style) in pure torch, with sequence and recurrent modes.

One block maps a token sequence ``x [B, L, d_model]`` to ``y [B, L, d_model]``::

    x_in, z  = split(in_proj(x))                      # [B, L, d_inner] each
    u        = silu(causal_depthwise_conv(x_in))      # kernel d_conv along L
    dt, b, c = split(x_proj(u))                       # input-dependent (selective) parameters
    dt       = softplus(dt_proj(dt))                  # [B, L, d_inner], the step size Δ
    A        = -exp(A_log)                            # [d_inner, d_state], diagonal, negative
    h_t      = exp(dt_t A) * h_{t-1} + dt_t b_t u_t   # [B, d_inner, d_state]
    y_t      = h_t · c_t + D * u_t                    # [B, d_inner]
    out      = out_proj(y * silu(z))

Two ways to run it, equal to rounding (a test checks float64 agreement to 1e-10):

- :meth:`MambaBlock.forward` over a whole sequence (training): every projection, the causal
  convolution, the discretisation and the read-out are batched over the sequence; the linear
  recurrence is a first-order scan (:class:`SelectiveScan`), one fused multiply-add per token with
  a hand-written reverse-scan backward, so autograd stores one ``[B, L, d_inner, d_state]`` tensor
  and no per-token graph.
- :meth:`MambaBlock.step` one token at a time with a carried :class:`MambaState` (the last
  ``d_conv - 1`` convolution inputs and the SSM state), so acting costs O(1) per token however
  long the episode is. ``forward`` also accepts and returns a state, so a long sequence can be
  processed in pieces.

Initialisation follows the usual Mamba recipe: ``A_log = log(1..d_state)`` per channel, ``D = 1``,
``dt_proj`` bias set so that ``softplus(bias)`` is log-uniform in ``[dt_min, dt_max]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn import functional as F  # noqa: N812

__all__ = ["MambaBlock", "MambaState", "SelectiveScan", "selective_scan"]


class SelectiveScan(torch.autograd.Function):
    """The selective scan, fused per token: ``(dt, A, b, c, u, h0) -> (y, h_last)``.

    Shapes: ``dt, u [B, L, d_inner]``, ``A [d_inner, d_state]``, ``b, c [B, L, d_state]``,
    ``h0 [B, d_inner, d_state]``; ``y [B, L, d_inner]`` (without the ``D u`` skip term). Per token::

        h_t = exp(dt_t A) * h_{t-1} + (dt_t u_t) b_t      y_t = h_t c_t

    The forward pass keeps every ``h_t`` (one ``[L, B, d_inner, d_state]`` tensor) and nothing
    else; the backward pass runs the adjoint ``g_t = dL/dh_t`` in reverse
    (``g_{t-1} = exp(dt_t A) * g_t + dy_{t-1} c_{t-1}``) and reads every gradient off it, token
    by token, on cache-sized tensors instead of streaming ``[B, L, d_inner, d_state]`` temporaries.
    """

    @staticmethod
    def forward(ctx, dt, a, b, c, u, h0):  # type: ignore[override]
        dt_l, b_l, c_l, u_l = (t.transpose(0, 1).contiguous() for t in (dt, b, c, u))
        dtu = (dt_l * u_l).unsqueeze(-1)  # [L, B, d_inner, 1]
        b_row, c_col = b_l.unsqueeze(-2), c_l.unsqueeze(-1)  # [L, B, 1, N], [L, B, N, 1]
        length = dt_l.shape[0]
        states = h0.new_empty((length, *h0.shape))
        y = dt_l.new_empty((*dt_l.shape, 1))
        h = h0
        for t in range(length):
            decay = torch.exp(dt_l[t].unsqueeze(-1) * a)
            h = torch.addcmul(dtu[t] * b_row[t], decay, h, out=states[t])
            torch.matmul(h, c_col[t], out=y[t])
        y = y.squeeze(-1)
        ctx.save_for_backward(dt_l, a, b_l, c_l, u_l, h0, states)
        return y.transpose(0, 1), h.clone()

    @staticmethod
    def backward(ctx, grad_y, grad_last):  # type: ignore[override]
        dt_l, a, b_l, c_l, u_l, h0, states = ctx.saved_tensors
        length = dt_l.shape[0]
        gy = torch.zeros_like(dt_l) if grad_y is None else grad_y.transpose(0, 1).contiguous()
        g = torch.zeros_like(h0) if grad_last is None else grad_last.clone()
        gy_col, gy_row = gy.unsqueeze(-1), gy.unsqueeze(-2)  # [L, B, d_inner, 1], [L, B, 1, ..]
        c_row, b_col = c_l.unsqueeze(-2), b_l.unsqueeze(-1)
        dt_col = dt_l.unsqueeze(-1)
        dtu_row = (dt_l * u_l).unsqueeze(-2)  # [L, B, 1, d_inner]
        g_c = c_l.new_empty((length, c_l.shape[1], 1, c_l.shape[2]))
        g_b = torch.empty_like(g_c)
        g_dtu = dt_l.new_empty((*dt_l.shape, 1))  # dL/d(dt_t u_t)
        g_dta = torch.empty_like(dt_l)  # sum_s dL/d(dt_t A) * A
        w_dt = torch.zeros_like(h0)  # sum_t dL/d(dt_t A) * dt_t, summed over B at the end
        for t in range(length - 1, -1, -1):
            h_prev = states[t - 1] if t > 0 else h0
            g = torch.addcmul(g, gy_col[t], c_row[t])  # dL/dh_t, now complete
            torch.matmul(gy_row[t], states[t], out=g_c[t])
            torch.matmul(g, b_col[t], out=g_dtu[t])
            torch.matmul(dtu_row[t], g, out=g_b[t])
            decay = torch.exp(dt_col[t] * a)
            w = g * h_prev
            w.mul_(decay)  # dL/d(dt_t A)
            torch.sum(w * a, dim=-1, out=g_dta[t])
            w_dt.addcmul_(w, dt_col[t])
            g = g.mul_(decay)  # dL/dh_{t-1} before adding dy_{t-1} c_{t-1}
        g_dtu = g_dtu.squeeze(-1)
        g_dt = g_dta + g_dtu * u_l
        g_u = g_dtu * dt_l
        return (
            g_dt.transpose(0, 1),
            w_dt.sum(0),
            g_b.squeeze(-2).transpose(0, 1),
            g_c.squeeze(-2).transpose(0, 1),
            g_u.transpose(0, 1),
            g,
        )


def selective_scan(
    dt: Tensor, a: Tensor, b: Tensor, c: Tensor, u: Tensor, h0: Tensor
) -> tuple[Tensor, Tensor]:
    """``(y, h_last)`` of the selective scan (see :class:`SelectiveScan` for shapes)."""
    batch, length, d_inner = dt.shape
    d_state = a.shape[-1]
    expected = {
        "u": (u, (batch, length, d_inner)),
        "A": (a, (d_inner, d_state)),
        "b": (b, (batch, length, d_state)),
        "c": (c, (batch, length, d_state)),
        "h0": (h0, (batch, d_inner, d_state)),
    }
    for name, (tensor, shape) in expected.items():
        if tuple(tensor.shape) != shape:
            raise ValueError(f"selective_scan: {name} must be {shape}, got {tuple(tensor.shape)}")
    if length == 0:
        return dt.new_zeros((batch, 0, d_inner)), h0
    return SelectiveScan.apply(dt, a, b, c, u, h0)


@dataclass
class MambaState:
    """The recurrent state of one :class:`MambaBlock` for ``B`` sequences."""

    conv: Tensor  # [B, d_inner, d_conv - 1], the last conv inputs (oldest first)
    ssm: Tensor  # [B, d_inner, d_state]

    def select(self, keep: Tensor) -> MambaState:
        """Zero the state of the sequences where the bool mask ``keep [B]`` is false."""
        k = keep.to(self.ssm.dtype)
        return MambaState(conv=self.conv * k[:, None, None], ssm=self.ssm * k[:, None, None])


class MambaBlock(nn.Module):
    """One selective state-space block (see the module docstring).

    Args:
        d_model: token width in and out.
        d_state: SSM state size per channel (``N``).
        d_conv: causal convolution kernel length (>= 1).
        expand: ``d_inner = expand * d_model``.
        dt_rank: rank of the Δ projection; default ``ceil(d_model / 16)``.
        dt_min, dt_max: range of the initial step sizes.
    """

    def __init__(
        self,
        d_model: int,
        d_state: int = 32,
        d_conv: int = 4,
        expand: int = 2,
        dt_rank: int | None = None,
        dt_min: float = 1e-3,
        dt_max: float = 0.1,
    ) -> None:
        super().__init__()
        for name, value in (
            ("d_model", d_model),
            ("d_state", d_state),
            ("d_conv", d_conv),
            ("expand", expand),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if not 0 < dt_min <= dt_max:
            raise ValueError(f"need 0 < dt_min <= dt_max, got dt_min={dt_min}, dt_max={dt_max}")
        self.d_model, self.d_state, self.d_conv = d_model, d_state, d_conv
        self.d_inner = expand * d_model
        self.dt_rank = dt_rank if dt_rank is not None else math.ceil(d_model / 16)
        self.in_proj = nn.Linear(d_model, 2 * self.d_inner, bias=False)
        self.conv_weight = nn.Parameter(torch.empty(self.d_inner, 1, d_conv))
        self.conv_bias = nn.Parameter(torch.empty(self.d_inner))
        bound = 1.0 / math.sqrt(d_conv)
        nn.init.uniform_(self.conv_weight, -bound, bound)
        nn.init.uniform_(self.conv_bias, -bound, bound)
        self.x_proj = nn.Linear(self.d_inner, self.dt_rank + 2 * d_state, bias=False)
        self.dt_proj = nn.Linear(self.dt_rank, self.d_inner, bias=True)
        nn.init.uniform_(self.dt_proj.weight, -(self.dt_rank**-0.5), self.dt_rank**-0.5)
        dt = torch.exp(
            torch.rand(self.d_inner) * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min)
        ).clamp(min=1e-4)
        with torch.no_grad():
            self.dt_proj.bias.copy_(dt + torch.log(-torch.expm1(-dt)))  # softplus^-1(dt)
        a = torch.arange(1, d_state + 1, dtype=torch.float32).repeat(self.d_inner, 1)
        self.A_log = nn.Parameter(torch.log(a))  # [d_inner, d_state]
        self.D = nn.Parameter(torch.ones(self.d_inner))
        self.out_proj = nn.Linear(self.d_inner, d_model, bias=False)

    def initial_state(self, batch: int, *, dtype=None, device=None) -> MambaState:
        """The all-zero state of ``batch`` fresh sequences."""
        ref = self.A_log
        dtype = dtype or ref.dtype
        device = device or ref.device
        return MambaState(
            conv=torch.zeros(batch, self.d_inner, self.d_conv - 1, dtype=dtype, device=device),
            ssm=torch.zeros(batch, self.d_inner, self.d_state, dtype=dtype, device=device),
        )

    def _selective_params(self, u: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """``dt [.., d_inner]``, ``b [.., d_state]``, ``c [.., d_state]`` from ``u [.., d_inner]``."""
        dbc = self.x_proj(u)
        dt_low, b, c = dbc.split([self.dt_rank, self.d_state, self.d_state], dim=-1)
        return F.softplus(self.dt_proj(dt_low)), b, c

    def forward(self, x: Tensor, state: MambaState | None = None) -> tuple[Tensor, MambaState]:
        """Run ``x [B, L, d_model]`` from ``state`` (zeros if None); returns ``(y, final state)``."""
        if x.ndim != 3 or x.shape[-1] != self.d_model:
            raise ValueError(f"x must be [B, L, {self.d_model}], got {tuple(x.shape)}")
        batch = x.shape[0]
        if state is None:
            state = self.initial_state(batch, dtype=x.dtype, device=x.device)
        x_in, z = self.in_proj(x).chunk(2, dim=-1)
        padded = torch.cat([state.conv, x_in.transpose(1, 2)], dim=-1)  # [B, d_inner, K-1+L]
        conv = F.conv1d(padded, self.conv_weight, self.conv_bias, groups=self.d_inner)
        u = F.silu(conv.transpose(1, 2))  # [B, L, d_inner]
        dt, b, c = self._selective_params(u)
        a = -torch.exp(self.A_log)  # [d_inner, d_state]
        y, new_ssm = selective_scan(dt, a, b, c, u, state.ssm)
        out = self.out_proj((y + self.D * u) * F.silu(z))
        new_conv = padded[..., padded.shape[-1] - (self.d_conv - 1) :]
        return out, MambaState(conv=new_conv, ssm=new_ssm)

    def step(self, x: Tensor, state: MambaState) -> tuple[Tensor, MambaState]:
        """One token ``x [B, d_model]`` from ``state``; returns ``(y [B, d_model], new state)``."""
        if x.ndim != 2 or x.shape[-1] != self.d_model:
            raise ValueError(f"x must be [B, {self.d_model}], got {tuple(x.shape)}")
        x_in, z = self.in_proj(x).chunk(2, dim=-1)
        window = torch.cat([state.conv, x_in.unsqueeze(-1)], dim=-1)  # [B, d_inner, d_conv]
        u = F.silu((window * self.conv_weight.squeeze(1)).sum(-1) + self.conv_bias)
        dt, b, c = self._selective_params(u)
        a = -torch.exp(self.A_log)
        h = torch.exp(dt.unsqueeze(-1) * a) * state.ssm + (dt * u).unsqueeze(-1) * b.unsqueeze(-2)
        y = (h @ c.unsqueeze(-1)).squeeze(-1) + self.D * u
        out = self.out_proj(y * F.silu(z))
        return out, MambaState(conv=window[..., 1:], ssm=h)
