"""The speed-ups of the MetaBBO hot path compute bit for bit what their plain formulas compute."""

from __future__ import annotations

import math

import pytest
import torch

from gymforge.envs.metabbo import bbob_functions as bf
from gymforge.envs.metabbo import optimizer as opt
from gymforge.envs.metabbo.bbob import evaluate, random_instances
from gymforge.envs.metabbo.features import pairwise_distances


def _plain_score(u: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    centre = x.mean(1, keepdim=True)
    xc, uc = (x - centre).to(torch.float32), (u - centre).to(torch.float32)
    return (xc * xc).sum(-1)[:, None, :] - 2.0 * torch.bmm(uc, xc.transpose(1, 2))


@pytest.mark.parametrize("masked", [False, True])
def test_nearest_is_the_first_argmin(masked: bool) -> None:
    g = torch.Generator().manual_seed(0)
    x = torch.rand(6, 40, 5, dtype=torch.float64, generator=g) * 10 - 5
    x[:, 20:30] = x[:, :10]  # duplicate rows: ties, the first index must win
    u = torch.cat([x[:, :15], torch.rand(6, 25, 5, dtype=torch.float64, generator=g)], dim=1)
    alive = torch.rand(6, 40, generator=g) < 0.7 if masked else torch.ones(6, 40, dtype=torch.bool)
    alive[:, 0] = True
    score = _plain_score(u, x)
    expected = torch.where(alive[:, None, :], score, math.inf).argmin(-1)
    assert torch.equal(opt._nearest(u, x, alive if masked else None), expected)


def test_float32_threshold_compares_like_float64() -> None:
    u = (torch.arange(0, 2**24, 97, dtype=torch.float64) / 2**24).to(torch.float32)
    values = [b / 15 for b in range(16)] + [0.3, 2**-25, -0.0, 1.5, math.inf, -math.inf, math.nan]
    for p in values:
        p64 = torch.tensor([p], dtype=torch.float64)
        assert torch.equal(u < opt._float32_threshold(p64), u.to(torch.float64) < p64), p


@pytest.mark.parametrize("cr", [0.0, 0.4, 1.0])
def test_exponential_crossover_matches_the_modular_formula(cr: float) -> None:
    from gymforge.core.instance_rng import InstanceRNG

    b, p, d = 3, 30, 7
    config = opt.DEConfig(dimension=d, population_size=p, crossover="exponential")
    x = torch.zeros(b, p, d, dtype=torch.float64)
    v = torch.ones(b, p, d, dtype=torch.float64)
    active = torch.ones(b, dtype=torch.bool)
    rng, twin = InstanceRNG.create([1, 2, 3]), InstanceRNG.create([1, 2, 3])
    u_start, u_mask = rng.uniform(p, where=active), rng.uniform(p, d - 1, where=active)
    cr_t = torch.full((b, 1, 1), cr, dtype=torch.float64)
    take = opt._crossover(config, x, v, cr_t, u_start, u_mask)
    start = twin.integers(d, p, where=active)[..., None]
    cont = twin.uniform(p, d - 1, where=active).to(torch.float64) < cr
    length = 1 + torch.cumprod(cont.long(), dim=-1).sum(-1, keepdim=True)
    expected = torch.remainder(torch.arange(d) - start, d) < length
    assert torch.equal(take.bool(), expected)


def test_rotation_is_the_sequential_column_sum() -> None:
    g = torch.Generator().manual_seed(1)
    m = torch.randn(4, 9, 9, dtype=torch.float64, generator=g)
    z = torch.randn(4, 33, 9, dtype=torch.float64, generator=g)
    expected = z[..., :1] * m[:, None, :, 0]
    for j in range(1, 9):
        expected = expected + z[..., j : j + 1] * m[:, None, :, j]
    assert torch.equal(bf._rot(m, z), expected)


def test_t_osz_matches_its_formula() -> None:
    g = torch.Generator().manual_seed(2)
    z = torch.randn(8, 500, dtype=torch.float64, generator=g) * 10.0 ** torch.randint(
        -30, 30, (8, 1), generator=g
    )
    z[0, :4] = torch.tensor([0.0, -0.0, 5e-324, -5e-324], dtype=torch.float64)
    nonzero = z != 0
    t = torch.log(torch.where(nonzero, z.abs(), 1.0)) / 0.1
    one = torch.tensor(1.0, dtype=torch.float64)
    c1 = torch.where(z > 0, one, 0.55)  # float64 constants (two bare floats give float32)
    c2 = torch.where(z > 0, one * 0.79, 0.31)
    w = 0.49 * (torch.sin(c1 * t) + torch.sin(c2 * t))
    expected = torch.where(nonzero, torch.sign(z) * torch.exp(0.1 * (t + w)), 0.0)
    assert torch.equal(bf._t_osz(z), expected)
    buffers = (torch.full_like(z, 7.0), torch.full_like(z, -1.0), torch.full_like(z, math.nan))
    assert torch.equal(bf._t_osz(z, buffers), expected) and torch.equal(buffers[2], expected)


@pytest.mark.parametrize("non_finite", [False, True])
def test_t_osz_zeros_are_positive_zero_bit_for_bit(non_finite: bool) -> None:
    """T_osz(+-0) is +0.0 (its NaN replaced when every input is finite, masked otherwise),
    overflows stay infinite, and non-finite inputs keep their NaN."""
    z = torch.tensor([0.0, -0.0, 1.5, -2.0, 1.7e308, -1.7e308, 5e-324, -3.0], dtype=torch.float64)
    if non_finite:
        z[-2:] = torch.tensor([math.inf, math.nan], dtype=torch.float64)
    nonzero = z != 0
    t = torch.log(torch.where(nonzero, z.abs(), 1.0)) / 0.1
    one = torch.tensor(1.0, dtype=torch.float64)
    c1, c2 = torch.where(z > 0, one, 0.55), torch.where(z > 0, one * 0.79, 0.31)
    w = 0.49 * (torch.sin(c1 * t) + torch.sin(c2 * t))
    expected = torch.where(nonzero, torch.exp(0.1 * (t + w)).copysign(z), 0.0)
    got = bf._t_osz(z)
    assert torch.equal(got.isnan(), expected.isnan())
    keep = ~expected.isnan()
    assert torch.equal(got[keep].view(torch.int64), expected[keep].view(torch.int64))
    assert got[5] == -math.inf and not got[4:6].isnan().any()  # overflows are not NaN
    assert int(got[1].view(torch.int64)) == 0  # +0.0, not -0.0


def test_pairwise_distances_equal_cdist() -> None:
    g = torch.Generator().manual_seed(3)
    x = torch.randn(5, 37, 6, dtype=torch.float64, generator=g)
    y = torch.randn(5, 41, 6, dtype=torch.float64, generator=g)
    for a, b in ((x, x), (x, y)):
        centre = b.mean(1, keepdim=True)
        expected = torch.cdist(
            (a - centre).to(torch.float32),
            (b - centre).to(torch.float32),
            compute_mode="use_mm_for_euclid_dist",
        )
        assert torch.equal(pairwise_distances(a, b), expected)


def test_evaluate_fast_path_and_non_finite_rows() -> None:
    inst = random_instances([1, 10, 10, 2], 4, [5, 6, 7, 8])
    x = torch.rand(4, 6, 4, dtype=torch.float64) * 10 - 5
    clean = evaluate(inst, x)
    bad = x.clone()
    bad[1, 2, 0], bad[3, 0, 3] = math.nan, math.inf
    f = evaluate(inst, bad)
    assert f[1, 2] == math.inf and f[3, 0] == math.inf
    keep = torch.isfinite(bad).all(-1)
    assert torch.equal(f[keep], clean[keep])
    # the cached per-function grouping gives the same values as a fresh object
    again = random_instances([1, 10, 10, 2], 4, [5, 6, 7, 8])
    assert torch.equal(evaluate(again, x), clean)
    assert torch.equal(evaluate(inst, x), clean)


@pytest.mark.parametrize("masked", [False, True])
def test_fused_draws_equal_successive_uniform_calls(masked: bool) -> None:
    """draws.uniforms gives rng.uniform's numbers and counters (large counters, both key
    halves, empty draws included)."""
    from gymforge.core.instance_rng import InstanceRNG
    from gymforge.envs.metabbo.draws import uniforms

    g = torch.Generator().manual_seed(4)
    seeds = torch.randint(-(2**62), 2**62, (9,), generator=g).tolist()
    rng, twin = InstanceRNG.create(seeds), InstanceRNG.create(seeds)
    rng.counter = twin.counter = torch.randint(0, 2**40, (9,), generator=g)
    where = torch.rand(9, generator=g) < 0.6 if masked else None
    shapes = [(37, 3), (37,), (37, 0), (37, 9), (5, 7)]
    for _ in range(3):
        expected = [twin.uniform(*s, where=where) for s in shapes]
        got = uniforms(rng, shapes, where)
        for e, u in zip(expected, got, strict=True):
            assert u.shape == e.shape and torch.equal(u, e)
        assert torch.equal(rng.counter, twin.counter)


def test_de_generation_draws_its_uniforms_in_stream_order() -> None:
    """One fused draw per generation gives the modules the uniforms they drew one by one."""
    from gymforge.core.instance_rng import InstanceRNG

    active = torch.tensor([True, False, True])
    for crossover, bound in (("exponential", "clip"), ("binomial", "controlled")):
        config = opt.DEConfig(
            dimension=6,
            population_size=11,
            mutation="rand/2",
            crossover=crossover,
            bound_handling=bound,
        )
        rng, twin = InstanceRNG.create([7, 8, 9]), InstanceRNG.create([7, 8, 9])
        got = opt._draw(config, 11, rng, active)
        assert torch.equal(got.donors, twin.uniform(11, 5, where=active))
        assert torch.equal(got.start, twin.uniform(11, where=active))
        assert torch.equal(
            got.crossover, twin.uniform(11, 5 if crossover == "exponential" else 6, where=active)
        )
        if bound == "controlled":
            assert got.repair is not None
            assert torch.equal(got.repair, twin.uniform(11, 6, where=active))
        else:
            assert got.repair is None
        assert torch.equal(rng.counter, twin.counter)


def test_select_is_torch_where_bit_for_bit() -> None:
    g = torch.Generator().manual_seed(5)
    a = torch.randn(4, 50, 3, dtype=torch.float64, generator=g)
    b = torch.randn(4, 50, 3, dtype=torch.float64, generator=g)
    a[0, :5, 0] = torch.tensor([math.nan, -0.0, math.inf, -math.inf, 0.0], dtype=torch.float64)
    b[0, :5, 0] = torch.tensor([0.0, 0.0, -0.0, math.nan, -0.0], dtype=torch.float64)
    mask = torch.rand(4, 50, 3, generator=g) < 0.5
    mask[0, :5, 0] = True
    for x, y in ((a, b), (b, a), (a.float(), b.float())):
        got, want = bf._select(mask, x, y), torch.where(mask, x, y)
        bits = torch.int64 if x.dtype == torch.float64 else torch.int32
        assert torch.equal(got.view(bits), want.view(bits))


def test_t_asy_and_sign_factors_match_their_formulas() -> None:
    """T_asy (abs + bit select) and the f4/f6 factors (arithmetic on 0/1) equal torch.where."""
    g = torch.Generator().manual_seed(6)
    z = torch.randn(3, 40, 7, dtype=torch.float64, generator=g) * 3
    z[0, 0, :3] = torch.tensor([0.0, -0.0, 1e-300], dtype=torch.float64)
    e = torch.arange(7, dtype=torch.float64) / 6
    pos = z > 0
    zp = torch.where(pos, z, 1.0)
    expected = torch.where(pos, torch.exp((1.0 + 0.2 * e * torch.sqrt(zp)) * torch.log(zp)), z)
    assert torch.equal(bf._t_asy(z, 0.2), expected)
    one = torch.tensor(1.0, dtype=torch.float64)
    assert torch.equal(pos.to(z.dtype).mul_(9.0).add_(1.0), torch.where(pos, one * 10.0, 1.0))
    assert torch.equal(z * pos.to(z.dtype).mul_(99.0).add_(1.0), torch.where(pos, 100.0 * z, z))


def _plain_crowding(
    x: torch.Tensor,
    f: torch.Tensor,
    trial: torch.Tensor,
    ft: torch.Tensor,
    alive: torch.Tensor,
    nearest: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Crowding selection as first written: torch.where over gathered rows."""
    b, p, _ = x.shape
    clean_ft = torch.where(torch.isfinite(ft), ft, math.inf)
    key = torch.where(alive, clean_ft, math.inf)
    best = torch.full((b, p), math.inf, dtype=key.dtype).scatter_reduce(
        1, nearest, key, reduce="amin", include_self=True
    )
    cand = torch.where(key == best.gather(1, nearest), torch.arange(p).expand(b, -1), p)
    winner = torch.full((b, p), p).scatter_reduce(1, nearest, cand, reduce="amin")
    has = winner < p
    win_idx = torch.where(has, winner, 0)
    challenger_f = torch.where(has, clean_ft.gather(1, win_idx), math.inf)
    replace_ = has & (challenger_f <= torch.where(torch.isfinite(f), f, math.inf)) & alive
    rows = torch.stack([trial[i, win_idx[i]] for i in range(b)])
    new_x = torch.where(replace_[..., None], rows, x)
    return new_x, torch.where(replace_, ft.gather(1, win_idx), f), replace_


@pytest.mark.parametrize("masked", [False, True])
def test_crowding_fast_path_matches_the_plain_selection(masked: bool) -> None:
    g = torch.Generator().manual_seed(7)
    b, p, d = 5, 30, 4
    x = torch.rand(b, p, d, dtype=torch.float64, generator=g)
    trial = torch.rand(b, p, d, dtype=torch.float64, generator=g)
    trial[:, :6] = x[:, :6]  # exact duplicates: ties in distance and in fitness
    f = torch.rand(b, p, dtype=torch.float64, generator=g)
    ft = torch.rand(b, p, dtype=torch.float64, generator=g)
    ft[:, :3] = f[:, :3]
    f[0, 5], ft[1, 7], ft[2, 8], f[2, 9] = math.inf, math.nan, math.inf, math.nan
    alive = torch.ones(b, p, dtype=torch.bool)
    if masked:
        alive[:, 25:] = False
    nearest = opt._nearest(trial, x, alive if masked else None)
    got = opt._crowding_select(x, f, trial, ft, alive)
    want = _plain_crowding(x, f, trial, ft, alive, nearest)
    for a, w in zip(got, want, strict=True):
        assert torch.equal(
            a.view(torch.int64) if a.is_floating_point() else a,
            w.view(torch.int64) if w.is_floating_point() else w,
        )


def test_blocked_matrices_equal_one_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nearest neighbours and pairwise sums computed block by block of instances (small
    scratch) equal the one-block results."""
    import functools

    from gymforge.envs.metabbo import features, workspace

    g = torch.Generator().manual_seed(8)
    x = torch.rand(7, 20, 3, dtype=torch.float64, generator=g)
    u = torch.rand(7, 20, 3, dtype=torch.float64, generator=g)
    alive = torch.rand(7, 20, generator=g) < 0.8
    alive[:, 0] = True
    full = [
        opt._nearest(u, x, None),
        opt._nearest(u, x, alive),
        features._pairwise_sum(x, None),
        features._pairwise_sum(x, alive),
    ]
    small = functools.partial(workspace.block_size, limit=3 * 20 * 20 * 8)  # 3 and 6 instances
    monkeypatch.setattr(opt, "block_size", small)
    monkeypatch.setattr(features, "block_size", small)
    blocked = [
        opt._nearest(u, x, None),
        opt._nearest(u, x, alive),
        features._pairwise_sum(x, None),
        features._pairwise_sum(x, alive),
    ]
    for a, w in zip(blocked, full, strict=True):
        assert torch.equal(a, w)
    pair = pairwise_distances(x, x)
    assert torch.equal(full[2], pair.sum((-1, -2), dtype=torch.float64))
    assert workspace.block_size(7, 1, limit=20) == 2
    assert workspace.block_size(7, 4, limit=80) == 2
    assert workspace.block_size(7, 8, limit=80) == 1
    assert workspace.block_size(30, 1, limit=20) == 1  # at least one instance per block


def test_decode_tables_equal_the_formulas() -> None:
    from gymforge.envs.metabbo.presets import PRESETS

    g = torch.Generator().manual_seed(9)
    for preset in PRESETS.values():
        action = torch.randint(0, 16, (40, preset.num_controlled), generator=g)
        hyper, migration = preset.decode(action)
        for k, hp in enumerate(preset.hyperparameters):
            want = hp.decode(action[:, k])
            got = migration if hp.subpop is None else hyper[hp.subpop][hp.key]
            assert got.dtype == want.dtype and torch.equal(got, want), (preset.name, hp.name)
    # bins outside the tables fall back to the formulas (no error, same extrapolation)
    hyper, _ = PRESETS["alg0"].decode(torch.tensor([[16, 0, 15], [-1, 3, 2]]))
    assert hyper[0]["F1"].tolist() == [16 / 15, -1 / 15]


def test_first_donor_draws_equal_the_per_donor_products() -> None:
    g = torch.Generator().manual_seed(10)
    u = torch.rand(4, 30, 3, generator=g)
    u[0, 0] = 1.0 - 2**-24  # the largest float32 uniform
    firsts = opt._first_draws(u, [30, 30, 30])
    assert firsts is not None
    for m, j in enumerate(firsts):
        free = 30 - (m + 1)
        assert torch.equal(j, (u[..., m].to(torch.float64) * free).long().clamp(max=free - 1))
    assert opt._first_draws(u, [torch.full((4, 1), 30)] * 3) is None


def test_centred_float32_is_recomputed_after_an_in_place_change() -> None:
    from gymforge.envs.metabbo.features import centred_float32

    g = torch.Generator().manual_seed(12)
    x = torch.rand(3, 8, 4, dtype=torch.float64, generator=g)

    def fresh(t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        centre = t.mean(1, keepdim=True)
        xc = (t - centre).to(torch.float32)
        return centre, xc, (xc * xc).sum(-1, keepdim=True)

    first = centred_float32(x)
    assert centred_float32(x) is first  # the same tensor again: kept
    for a, w in zip(first, fresh(x), strict=True):
        assert torch.equal(a, w)
    x.mul_(2.0)
    for a, w in zip(centred_float32(x), fresh(x), strict=True):
        assert torch.equal(a, w)


def test_evaluate_finite_equals_evaluate_on_finite_points() -> None:
    from gymforge.envs.metabbo.bbob import evaluate_finite

    fids = list(range(1, 25))
    inst = random_instances(fids, 6, list(range(24)))
    g = torch.Generator().manual_seed(13)
    x = torch.rand(24, 11, 6, dtype=torch.float64, generator=g) * 10 - 5
    x[3, 0] = 1e300  # overflows to +inf in both
    want = evaluate(inst, x)
    assert torch.equal(evaluate_finite(inst, x), want)
    assert not torch.isnan(want).any() and want[3, 0] == math.inf


@pytest.mark.parametrize("mutation", ["current-to-rand/1", "rand/2", "current-to-best/1"])
def test_generation_temporaries_do_not_leak_into_states(mutation: str) -> None:
    """The donors, mutants and trials live in reused scratch buffers (and are changed in
    place): a returned state must not share memory with them, nor with its input state, so
    later generations leave earlier states untouched."""
    from gymforge.core.instance_rng import InstanceRNG

    config = opt.DEConfig(dimension=4, population_size=12, mutation=mutation, selection="crowding")
    inst = random_instances([1, 2, 10], 4, [1, 2, 3])
    rng = InstanceRNG.create([4, 5, 6])
    hyper = {"F1": 0.7, "F2": 0.4, "Cr": 0.9}
    states = [opt.initial_state(config, inst, rng)]
    copies = []
    for _ in range(4):
        copies.append({k: v.clone() for k, v in vars(states[-1]).items()})
        states.append(opt.step(config, inst, states[-1], hyper, rng))
    for state, saved in zip(states, copies, strict=False):
        for name, value in saved.items():
            assert torch.equal(getattr(state, name), value), name


def test_in_place_and_out_variants_equal_the_plain_expressions() -> None:
    """Rotation written over its input, float64 differences rounded to float32 as they are
    stored, and distances to a point from a scratch buffer: the plain expressions' bits."""
    from gymforge.envs.metabbo import features

    g = torch.Generator().manual_seed(14)
    m = torch.randn(3, 7, 7, dtype=torch.float64, generator=g)
    z = torch.randn(3, 21, 7, dtype=torch.float64, generator=g) * 4
    want = bf._rot(m, z)
    assert torch.equal(bf._rot(m, z, out=z), want) and torch.equal(z, want)
    centre = z.mean(1, keepdim=True)
    out = torch.empty(z.shape, dtype=torch.float32)
    assert torch.equal(features._centred_into(out, z, centre), (z - centre).to(torch.float32))
    point = z[:, 4:5]
    assert torch.equal(features._distances_to(z, point)[:, 0], (z - point).norm(dim=-1))
    points = torch.cat([point, z[:, 9:10] * 0.5], dim=1)  # [B, 2, D]: each its own norms
    both = features._distances_to(z, points)
    for k in range(2):
        assert torch.equal(both[:, k], (z - points[:, k : k + 1]).norm(dim=-1))


def test_scratch_views_are_kept_per_shape_and_follow_a_grown_buffer() -> None:
    from gymforge.envs.metabbo.workspace import scratch

    cpu = torch.device("cpu")
    a = scratch("test-scratch", (2, 3), torch.float64, cpu)
    assert scratch("test-scratch", (2, 3), torch.float64, cpu) is a
    small = scratch("test-scratch", (4,), torch.float64, cpu)  # same memory, another shape
    assert small.data_ptr() == a.data_ptr() and small.is_contiguous()
    big = scratch("test-scratch", (5, 7), torch.float64, cpu)  # grows: a new buffer
    again = scratch("test-scratch", (2, 3), torch.float64, cpu)
    assert again is not a and again.data_ptr() == big.data_ptr()
    other = scratch("test-scratch-2", (2, 3), torch.float64, cpu)
    assert other.data_ptr() != again.data_ptr()


def test_temporaries_above_the_cap_are_fresh_and_give_the_same_bits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Large temporaries are fresh tensors (bounded memory), small ones scratch memory; a run
    computes the same bits either way."""
    from gymforge.core.instance_rng import InstanceRNG
    from gymforge.envs.metabbo import workspace

    cpu = torch.device("cpu")
    small = workspace.temporary("test-temporary", (3, 4), torch.float64, cpu)
    assert (
        small.data_ptr()
        == workspace.scratch("test-temporary", (3, 4), torch.float64, cpu).data_ptr()
    )

    def run() -> list[torch.Tensor]:
        config = opt.DEConfig(dimension=5, population_size=20, selection="crowding")
        inst = random_instances([2, 10, 11, 1], 5, [1, 2, 3, 4])
        rng = InstanceRNG.create([7, 8, 9, 10])
        state = opt.initial_state(config, inst, rng)
        for _ in range(5):
            state = opt.step(config, inst, state, {"F1": 0.6, "F2": 0.5, "Cr": 0.8}, rng)
        return [state.population, state.fitness, state.best_f]

    kept = run()
    monkeypatch.setattr(workspace, "MAX_TEMPORARY_ELEMENTS", 0)
    big = workspace.temporary("test-temporary", (3, 4), torch.float64, cpu)
    assert big.data_ptr() != small.data_ptr()
    for a, b in zip(run(), kept, strict=True):
        assert torch.equal(a, b)


def _specials(dtype: torch.dtype = torch.float64) -> torch.Tensor:
    g = torch.Generator().manual_seed(5)
    v = torch.randn(4, 50, generator=g, dtype=dtype) * 1e3
    v.view(-1)[:8] = torch.tensor(
        [math.nan, math.inf, -math.inf, 0.0, -0.0, 1e308, -1e308, 5e-324], dtype=dtype
    )
    return v


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    bits = {torch.float64: torch.int64, torch.float32: torch.int32}
    if a.dtype in bits:
        a, b = a.contiguous().view(bits[a.dtype]), b.contiguous().view(bits[b.dtype])
    return a.dtype == b.dtype and torch.equal(a, b)


def test_clean_and_error_equal_their_where_formulas() -> None:
    from gymforge.envs.metabbo.dynamics import _error

    f = _specials()
    assert _same_bits(opt._clean(f), torch.where(torch.isfinite(f), f, math.inf))
    f_opt = torch.tensor([0.0, -1.0, 3.5, 1e300], dtype=torch.float64)[:, None]
    err = f - f_opt
    plain = torch.where(torch.isnan(err), math.inf, err).clamp(min=0.0)
    assert _same_bits(_error(f, f_opt), plain)
    for t in (f, f.to(torch.float32)):  # the isfinite spelling of features.py
        assert torch.equal(t.abs() < math.inf, torch.isfinite(t))
    plain_bx = torch.where(torch.isfinite(f), f, 0.0)
    assert _same_bits(torch.nan_to_num(f, nan=0.0, posinf=0.0, neginf=0.0), plain_bx)


def test_status_features_equal_the_per_feature_formulas() -> None:
    """The fused [B, 3, P] cost means and [B, 2, P, D] distances against one feature at a time
    (and the masked path, and non-finite costs)."""
    from gymforge.envs.metabbo.features import _pairwise_sum, status_features

    g = torch.Generator().manual_seed(7)
    b, p, d = 5, 30, 4
    x = torch.rand(b, p, d, generator=g, dtype=torch.float64) * 10 - 5
    cost = torch.rand(b, p, generator=g, dtype=torch.float64) * 100
    cost[1, 3], cost[2, 4] = math.inf, math.nan
    best_x = x[:, 0].clone()
    best_f = cost.nan_to_num(nan=0.0, posinf=0.0).amin(-1) - 1.0
    best_f[3] = math.inf  # no finite gbest: cost features 0
    init_max = torch.full((b,), 150.0, dtype=torch.float64)
    gen, stag = torch.arange(b) * 7, torch.arange(b)
    improved = torch.arange(b) % 2 == 0
    for masked in (False, True):
        alive = torch.ones(b, p, dtype=torch.bool)
        if masked:
            alive[:, p - 7 :] = False
        got = status_features(
            x, cost, alive, best_x, best_f, init_max, gen, stag, improved, 50, 10.0
        )
        n = alive.sum(-1).to(torch.float64) if masked else float(p)
        ok = torch.isfinite(best_f)
        c = torch.where(torch.isfinite(cost), cost, init_max[:, None])
        g0 = torch.where(ok, best_f, 0.0)
        c = torch.where(ok[:, None], c, 0.0)
        span = (init_max - g0).clamp(min=0.0)

        def mean(v: torch.Tensor, alive=alive, masked=masked, n=n) -> torch.Tensor:
            return (torch.where(alive, v, 0.0) if masked else v).sum(-1) / n

        i = torch.where(alive, c, math.inf).argmin(-1)
        cbest = c.gather(1, i[:, None])
        x_c = x.gather(1, i[:, None, None].expand(-1, 1, d))
        diag = 10.0 * math.sqrt(d)
        mean_c = mean(c)
        f = [
            mean(c - g0[:, None]) / (span + 1e-8),
            _pairwise_sum(x, alive if masked else None) / (n * n) / diag,
            mean((c - mean_c[:, None]) ** 2).sqrt() / (span / 2.0 + 1e-8),
            (50 - gen).to(torch.float64) / 50,
            stag.to(torch.float64) / 50,
            mean((x - x_c).norm(dim=-1)) / diag,
            mean(c - cbest) / (span + 1e-8),
            mean((x - best_x[:, None]).norm(dim=-1)) / diag,
            improved.to(torch.float64),
        ]
        okf = ok.to(torch.float64)
        f[0], f[2], f[6] = f[0] * okf, f[2] * okf, f[6] * okf
        want = torch.nan_to_num(torch.stack(f, -1), nan=0.0).clamp(0.0, 1.0).to(torch.float32)
        assert _same_bits(got, want), masked


def test_cached_reward_terms_equal_the_plain_reward() -> None:
    """dynamics.step reuses the previous step's error and the episode's e0 terms: the rewards
    and errors of a run equal those recomputed from the states."""
    from gymforge.envs.metabbo.dynamics import _error
    from gymforge.envs.metabbo.gym_env import MetaBBOVecEnv

    env = MetaBBOVecEnv(num_envs=6, split="all", max_generations=30)
    env.reset(seed=3)
    g = torch.Generator().manual_seed(1)
    for _ in range(40):
        prev_f, e0 = env.state.best_f.clone(), env.state.init_error.clone()
        f_opt = env.state.problems.f_opt.clone()
        act = torch.randint(0, 16, (6, 3), generator=g)
        _, reward, term, trunc, info = env.step(act)
        done = term | trunc
        prev_err = _error(prev_f, f_opt)
        err = torch.where(done, info["best_error"], _error(env.state.best_f, f_opt))
        usable = torch.isfinite(e0) & (e0 > 0) & torch.isfinite(err) & torch.isfinite(prev_err)
        want = torch.where(usable, (prev_err - err) / torch.where(usable, e0, 1.0), 0.0)
        assert _same_bits(reward, want.to(torch.float32))
        assert _same_bits(env.state.error, _error(env.state.best_f, env.state.problems.f_opt))


def test_exponential_crossover_bit_select_equals_torch_where() -> None:
    """The int64 mask words pick v's or x's bits exactly (NaN payloads, signed zeros)."""
    g = torch.Generator().manual_seed(21)
    b, p, d = 4, 25, 6
    config = opt.DEConfig(dimension=d, population_size=p, crossover="exponential")
    x = torch.randn(b, p, d, generator=g, dtype=torch.float64)
    v = torch.randn(b, p, d, generator=g, dtype=torch.float64)
    x.view(-1)[:4] = torch.tensor([math.nan, -0.0, math.inf, -math.nan], dtype=torch.float64)
    v.view(-1)[4:8] = torch.tensor([-math.nan, -0.0, -math.inf, 0.0], dtype=torch.float64)
    u_start = torch.rand(b, p, generator=g)
    u_mask = torch.rand(b, p, d - 1, generator=g)
    cr = torch.full((b, 1, 1), 0.6, dtype=torch.float64)
    start = torch.clamp((u_start * d).long(), max=d - 1)
    extra = torch.cumprod((u_mask < opt._float32_threshold(cr)).long(), dim=-1).sum(-1)
    take = opt._exponential_masks(d, x.device)[(start * d + extra).view(-1)].view(x.shape)
    want = torch.where(take, v, x)
    got = opt._crossover(config, x, v.clone(), cr, u_start, u_mask)
    assert torch.equal(got.view(torch.int64), want.view(torch.int64))


@pytest.mark.parametrize("k", [1, 9, 30])
def test_leading_successes_equal_the_integer_cumprod(k: int) -> None:
    """The float32 count of leading successes equals the int64 cumprod-and-sum formula, for
    every run length (thresholds 0 and 1 and NaN included)."""
    g = torch.Generator().manual_seed(k)
    u = torch.rand(5, 40, k, generator=g)
    threshold = torch.rand(5, 1, 1, generator=g) ** 0.2
    threshold[:3, 0, 0] = torch.tensor([0.0, 1.0, math.nan])
    expected = torch.cumprod((u < threshold).long(), dim=-1).sum(-1)
    got = opt._leading_successes(u, threshold)
    assert got.dtype == torch.int64
    assert torch.equal(got, expected)
    assert set(got[1].unique().tolist()) == {k}
