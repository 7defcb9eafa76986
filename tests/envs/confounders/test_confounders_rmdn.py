"""R-MDN layer: known answers (ridge, weighted ridge), confounder removal, buffers, eval mode."""

from __future__ import annotations

import copy
import io
import pickle

import pytest
import torch

from gymforge.agents.confounders.rmdn import RecursiveMetadataNorm, design_matrix
from gymforge.envs.confounders.metrics import u_distance_correlation_sqr

F64 = torch.float64


def _batches(t: int, n: int, d: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    true_beta = torch.randn(3, d, generator=g, dtype=F64)
    out = []
    for _ in range(t):
        y = torch.randint(0, 2, (n,), generator=g).to(F64)
        c = 3.0 + 3.0 * torch.rand(n, generator=g, dtype=F64) + y
        x = design_matrix(y, c)
        f = x @ true_beta + torch.randn(n, d, generator=g, dtype=F64)
        out.append((x, f))
    return out


def test_forgetting_one_and_no_regularisation_equals_ridge_on_all_the_data():
    layer = RecursiveMetadataNorm(7, forgetting_factor=1.0, reg=0.0, delta=0.01).to(F64)
    batches = _batches(20, 16, 7)
    for x, f in batches:
        layer(f, x)
    x_all = torch.cat([x for x, _ in batches])
    f_all = torch.cat([f for _, f in batches])
    gram = x_all.T @ x_all + 0.01 * torch.eye(3, dtype=F64)
    torch.testing.assert_close(
        layer.beta, torch.linalg.solve(gram, x_all.T @ f_all), atol=1e-8, rtol=0
    )
    torch.testing.assert_close(layer.P, torch.linalg.inv(gram), atol=1e-8, rtol=0)


def test_forgetting_below_one_equals_the_per_batch_weighted_closed_form():
    lam, delta = 0.9, 0.5
    layer = RecursiveMetadataNorm(5, forgetting_factor=lam, reg=0.0, delta=delta).to(F64)
    batches = _batches(12, 10, 5, seed=1)
    for x, f in batches:
        layer(f, x)
    t = len(batches)
    gram = lam**t * delta * torch.eye(3, dtype=F64)
    moment = torch.zeros(3, 5, dtype=F64)
    for i, (x, f) in enumerate(batches, start=1):
        gram = gram + lam ** (t - i) * x.T @ x
        moment = moment + lam ** (t - i) * x.T @ f
    torch.testing.assert_close(layer.beta, torch.linalg.solve(gram, moment), atol=1e-8, rtol=0)
    torch.testing.assert_close(layer.P, torch.linalg.inv(gram), atol=1e-8, rtol=0)


def test_regularisation_adds_reg_identity_after_each_update():
    layer = RecursiveMetadataNorm(2, forgetting_factor=1.0, reg=0.25, delta=1.0).to(F64)
    x = design_matrix(torch.tensor([0.0, 1.0], dtype=F64), torch.tensor([2.0, 3.0], dtype=F64))
    layer(torch.zeros(2, 2, dtype=F64), x)
    expected = torch.linalg.inv(torch.eye(3, dtype=F64) + x.T @ x) + 0.25 * torch.eye(3, dtype=F64)
    torch.testing.assert_close(layer.P, expected, atol=1e-12, rtol=0)


def test_output_removes_confounder_and_intercept_but_keeps_the_label_effect():
    g = torch.Generator().manual_seed(3)
    n, d = 400, 16
    y = torch.randint(0, 2, (n,), generator=g).to(F64)
    c = 3.0 + 2.0 * torch.rand(n, generator=g, dtype=F64) + 1.5 * y  # confounded with y
    a = torch.randn(d, generator=g, dtype=F64)
    b = torch.randn(d, generator=g, dtype=F64)
    f = y[:, None] * a + c[:, None] * b + 0.1 * torch.randn(n, d, generator=g, dtype=F64)
    x = design_matrix(y, c)
    layer = RecursiveMetadataNorm(d, forgetting_factor=1.0, reg=0.0).to(F64)
    for start in range(0, n, 50):
        layer(f[start : start + 50], x[start : start + 50])
    layer.eval()
    r = layer(f, x)
    for k in (0, 1):
        mask = y == k
        before = float(u_distance_correlation_sqr(f[mask], c[mask]))
        after = float(u_distance_correlation_sqr(r[mask], c[mask]))
        assert before > 0.5
        assert abs(after) < 0.02, f"class {k}: dCor² {after} after R-MDN"
    # the label effect stays: the class means differ by a
    diff = r[y == 1].mean(0) - r[y == 0].mean(0)
    torch.testing.assert_close(diff, a, atol=0.05, rtol=0)


def test_state_dict_round_trip_keeps_beta_and_p():
    layer = RecursiveMetadataNorm(4).to(F64)
    for x, f in _batches(3, 8, 4):
        layer(f, x)
    assert {"beta", "P"} <= set(layer.state_dict())
    buffer = io.BytesIO()
    torch.save(layer.state_dict(), buffer)
    buffer.seek(0)
    fresh = RecursiveMetadataNorm(4).to(F64)
    fresh.load_state_dict(torch.load(buffer))
    assert torch.equal(fresh.P, layer.P) and torch.equal(fresh.beta, layer.beta)
    assert not torch.equal(fresh.P, torch.eye(3, dtype=F64) / 0.01)


def test_eval_mode_changes_no_buffer_and_ignores_the_label_column():
    layer = RecursiveMetadataNorm(4).to(F64)
    batches = _batches(4, 8, 4)
    for x, f in batches[:3]:
        layer(f, x)
    beta, p = layer.beta.clone(), layer.P.clone()
    layer.eval()
    x, f = batches[3]
    out = layer(f, x)
    assert torch.equal(layer.beta, beta) and torch.equal(layer.P, p)
    no_labels = x.clone()
    no_labels[:, 0] = 0.0
    assert torch.equal(layer(f, no_labels), out)


def test_gradients_flow_through_the_features_only():
    layer = RecursiveMetadataNorm(6)
    x, f = _batches(1, 8, 6)[0]
    feats = f.float().reshape(8, 2, 3).requires_grad_(True)
    out = layer(feats, x.float())
    assert out.shape == feats.shape
    out.sum().backward()
    torch.testing.assert_close(feats.grad, torch.ones_like(feats))
    assert not layer.beta.requires_grad


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"num_features": 0}, "num_features"),
        ({"num_features": 3, "forgetting_factor": 1.5}, "forgetting_factor"),
        ({"num_features": 3, "forgetting_factor": 0.0}, "forgetting_factor"),
        ({"num_features": 3, "reg": -1.0}, "reg"),
        ({"num_features": 3, "delta": float("nan")}, "delta"),
    ],
)
def test_bad_arguments_name_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        RecursiveMetadataNorm(**kwargs)


def test_wrong_design_shape_is_rejected():
    layer = RecursiveMetadataNorm(4)
    with pytest.raises(ValueError, match="design"):
        layer(torch.zeros(5, 4), torch.zeros(5, 2))
    with pytest.raises(ValueError, match="features"):
        layer(torch.zeros(5, 3), torch.zeros(5, 3))


def _literal_reference_step(p, beta, x, f, lam, reg):
    """The reference's update, literally: Woodbury form with an N x N inverse."""
    p = p / lam
    k = p @ x.T @ torch.linalg.inv(torch.eye(x.shape[0], dtype=x.dtype) + x @ p @ x.T)
    p = p - k @ x @ p + reg * torch.eye(p.shape[0], dtype=x.dtype)
    beta = beta + k @ (f - x @ beta)
    return p, beta


def test_update_equals_the_literal_woodbury_form_of_the_reference():
    layer = RecursiveMetadataNorm(6, forgetting_factor=0.97, reg=1e-3).to(F64)
    p, beta = layer.P.clone(), layer.beta.clone()
    for x, f in _batches(15, 24, 6, seed=4):
        layer(f, x)
        p, beta = _literal_reference_step(p, beta, x, f, 0.97, 1e-3)
    torch.testing.assert_close(layer.P, p, atol=1e-9, rtol=1e-9)
    torch.testing.assert_close(layer.beta, beta, atol=1e-9, rtol=1e-9)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_numpy_fast_path_equals_the_torch_path(dtype):
    """One confounder on CPU takes the NumPy path; the general torch path must give the same."""
    fast = RecursiveMetadataNorm(6, forgetting_factor=0.95, reg=1e-3).to(dtype)
    general = RecursiveMetadataNorm(6, forgetting_factor=0.95, reg=1e-3).to(dtype)
    tol = 1e-10 if dtype == F64 else 1e-4
    for x, f in _batches(40, 32, 6, seed=5):
        x, f = x.to(dtype), f.to(dtype)
        assert fast._numpy_buffers(f, x) is not None
        out = fast(f, x)
        general._update_torch(f, x)
        expected = f - x[:, 1:] @ general.beta[1:]
        torch.testing.assert_close(out, expected, atol=tol, rtol=tol)
    torch.testing.assert_close(fast.P, general.P, atol=tol, rtol=tol)
    torch.testing.assert_close(fast.beta, general.beta, atol=tol, rtol=tol)


def test_mixed_dtypes_and_several_confounders_take_the_torch_path():
    layer = RecursiveMetadataNorm(4, num_confounders=2)
    x = design_matrix(torch.ones(8), torch.rand(8, 2))
    assert layer._numpy_buffers(torch.rand(8, 4), x) is None
    assert RecursiveMetadataNorm(4)._numpy_buffers(torch.rand(8, 4, dtype=F64), x[:, :3]) is None


def _reference_copy_after(layer: RecursiveMetadataNorm, batches) -> RecursiveMetadataNorm:
    """A layer that starts from ``layer``'s buffers and takes the torch path on ``batches``."""
    general = RecursiveMetadataNorm(layer.num_features, forgetting_factor=0.95, reg=1e-3)
    general = general.to(layer.beta.dtype)
    general.load_state_dict(layer.state_dict())
    for x, f in batches:
        general._update_torch(f.to(layer.beta.dtype), x.to(layer.beta.dtype))
    return general


def test_numpy_path_follows_the_buffers_through_dtype_changes_copies_and_loads():
    """The NumPy path writes into the layer's current buffers, never into stale or shared ones."""
    batches = _batches(6, 16, 5, seed=7)
    layer = RecursiveMetadataNorm(5, forgetting_factor=0.95, reg=1e-3)
    for x, f in batches[:2]:
        layer(f.float(), x.float())
    layer = layer.double()  # new buffer tensors: the cached views must not be reused
    expected = _reference_copy_after(layer, batches[2:4])
    for x, f in batches[2:4]:
        layer(f, x)
    torch.testing.assert_close(layer.beta, expected.beta, atol=1e-10, rtol=1e-10)
    torch.testing.assert_close(layer.P, expected.P, atol=1e-10, rtol=1e-10)

    twin = copy.deepcopy(layer)
    unpickled = pickle.loads(pickle.dumps(layer))
    beta, p = layer.beta.clone(), layer.P.clone()
    x, f = batches[4]
    twin(f, x)
    unpickled(f, x)
    assert torch.equal(layer.beta, beta) and torch.equal(layer.P, p)  # the copies own their buffers
    assert torch.equal(twin.beta, unpickled.beta) and not torch.equal(twin.beta, beta)

    layer.load_state_dict(twin.state_dict())  # in-place copy: the same buffers, now twin's values
    x, f = batches[5]
    layer(f, x)
    twin(f, x)
    assert torch.equal(layer.beta, twin.beta) and torch.equal(layer.P, twin.P)


def test_numpy_path_output_keeps_the_graph_only_when_the_input_has_one():
    layer = RecursiveMetadataNorm(6)
    x, f = _batches(1, 8, 6)[0]
    plain = layer(f.float(), x.float())
    assert not plain.requires_grad
    tracked = f.float().requires_grad_(True)
    out = layer(tracked, x.float())
    assert out.requires_grad and out.grad_fn is not None
    with torch.no_grad():
        assert not layer(tracked, x.float()).requires_grad
