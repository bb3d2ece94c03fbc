"""Sparse tensors (``oxmera.ops.sparse``, ``oxmera.sparse``): against PyTorch where it is
installed, against dense NumPy products otherwise; gradients w.r.t. the values and the
dense operand by finite differences; a GCN layer trained as PyTorch trains it."""
import sys
import warnings

import numpy as np
import pytest

import oxmera
from oxmera.autograd import gradcheck, gradgradcheck

INDEX = [[0, 1, 1, 2, 1, 0], [3, 2, 0, 1, 2, 0]]        # (1, 2) twice: uncoalesced
VALUES = [1.5, -2.0, 0.5, 3.0, 1.0, -0.25]


def _torch():
    torch = pytest.importorskip("torch")
    warnings.filterwarnings("ignore", message="Sparse invariant checks")
    warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
    return torch


def _pair(torch, index=INDEX, values=VALUES, size=(3, 4), dtype=np.float64):
    ours = oxmera.sparse_coo_tensor(index, np.array(values, dtype=dtype), size)
    theirs = torch.sparse_coo_tensor(torch.tensor(index), torch.tensor(np.array(values, dtype)),
                                     size)
    return ours, theirs


def _np(value):
    return value.detach().numpy() if isinstance(value, oxmera.Tensor) else \
        value.detach().cpu().numpy()


def _dense_reference(index=INDEX, values=VALUES, size=(3, 4)):
    out = np.zeros(size)
    np.add.at(out, tuple(np.array(index)), values)
    return out


# -- construction and queries ----------------------------------------------------------

def test_queries_and_to_dense():
    s = oxmera.sparse_coo_tensor(INDEX, VALUES, (3, 4))
    assert s.is_sparse and not s.is_sparse_csr and s.layout is oxmera.sparse_coo
    assert s.shape == (3, 4) and s.size(1) == 4 and s.dim() == 2 and s.ndim == 2
    assert s._nnz() == 6 and s.sparse_dim() == 2 and s.dense_dim() == 0
    assert s.dtype == oxmera.float32 and not s.is_coalesced() and not s.requires_grad
    assert not isinstance(s, oxmera.Tensor)
    np.testing.assert_allclose(s.to_dense().numpy(), _dense_reference(), rtol=1e-6)
    dense = oxmera.ones(2)
    assert not dense.is_sparse and dense.layout is oxmera.strided and dense.to_dense() is dense


def test_size_is_inferred_and_hybrid_values():
    s = oxmera.sparse_coo_tensor([[0, 2]], [[1.0, 2.0], [3.0, 4.0]])
    assert s.shape == (3, 2) and s.sparse_dim() == 1 and s.dense_dim() == 1
    np.testing.assert_array_equal(s.to_dense().numpy(), [[1, 2], [0, 0], [3, 4]])


def test_against_torch_coalesce_to_sparse_and_to_dense():
    torch = _torch()
    ours, theirs = _pair(torch)
    np.testing.assert_array_equal(_np(ours.to_dense()), _np(theirs.to_dense()))
    a, b = ours.coalesce(), theirs.coalesce()
    assert a.is_coalesced() and b.is_coalesced()
    np.testing.assert_array_equal(_np(a.indices()), _np(b.indices()))
    np.testing.assert_array_equal(_np(a.values()), _np(b.values()))
    assert a._nnz() == b._nnz()
    dense = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    for args in ((), (1,)):
        a = oxmera.tensor(dense).to_sparse(*args)
        b = torch.tensor(dense).to_sparse(*args)
        np.testing.assert_array_equal(_np(a.indices()), _np(b.indices()))
        np.testing.assert_array_equal(_np(a.values()), _np(b.values()))
        assert a.is_coalesced() == b.is_coalesced()


def test_against_torch_sparse_sum_and_softmax():
    torch = _torch()
    ours, theirs = _pair(torch)
    assert float(oxmera.sparse.sum(ours)) == pytest.approx(float(torch.sparse.sum(theirs)))
    for dim in (0, 1, (0, 1), -1):
        a, b = oxmera.sparse.sum(ours, dim), torch.sparse.sum(theirs, dim)
        a = a.to_dense() if isinstance(a, oxmera.sparse.SparseTensor) else a
        b = b.to_dense() if b.is_sparse else b
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-12)
    for fn in ("softmax", "log_softmax"):
        for dim in (0, 1):
            a = getattr(oxmera.sparse, fn)(ours, dim).to_dense()
            b = getattr(torch.sparse, fn)(theirs, dim).to_dense()
            np.testing.assert_allclose(_np(a), _np(b), rtol=1e-12, atol=1e-15)


def test_hybrid_sum_against_torch():
    torch = _torch()
    values = np.arange(6.0).reshape(3, 2)
    ours, theirs = _pair(torch, [[0, 2, 0]], values, (3, 2))
    for dim in (0, 1, (0, 1)):
        a, b = oxmera.sparse.sum(ours, dim), torch.sparse.sum(theirs, dim)
        a = a.to_dense() if isinstance(a, oxmera.sparse.SparseTensor) else a
        b = b.to_dense() if b.is_sparse else b
        np.testing.assert_allclose(_np(a), _np(b))


def test_products_against_dense_numpy():
    s = oxmera.sparse_coo_tensor(INDEX, np.array(VALUES), (3, 4))
    reference = _dense_reference()
    d = np.random.default_rng(0).normal(size=(4, 5))
    left = np.random.default_rng(1).normal(size=(2, 3))
    np.testing.assert_allclose((s @ oxmera.tensor(d)).numpy(), reference @ d)
    np.testing.assert_allclose(oxmera.mm(oxmera.tensor(left), s).numpy(), left @ reference)
    np.testing.assert_allclose((oxmera.tensor(left) @ s).numpy(), left @ reference)
    np.testing.assert_allclose(s.matmul(oxmera.tensor(d[:, 0])).numpy(), reference @ d[:, 0])
    np.testing.assert_allclose((s.t() @ oxmera.tensor(left.T)).numpy(), reference.T @ left.T)
    np.testing.assert_allclose((oxmera.tensor(reference) + s).numpy(), 2 * reference)
    np.testing.assert_allclose(((2 * s - s) * 0.5).to_dense().numpy(), reference / 2)


def test_float32_and_float16():
    s = oxmera.sparse_coo_tensor(INDEX, VALUES, (3, 4))
    out = s @ oxmera.ones(4, 2)
    assert out.dtype == oxmera.float32
    half = s.half() @ oxmera.ones(4, 2, dtype=oxmera.float16)
    assert half.dtype == oxmera.float16
    np.testing.assert_allclose(half.float().numpy(), out.numpy(), rtol=1e-3)


def test_csr_against_torch():
    torch = _torch()
    crow, col, values = [0, 2, 2, 4], [0, 3, 1, 2], [1.0, 2.0, 3.0, 4.0]
    ours = oxmera.sparse_csr_tensor(crow, col, values, (3, 4), dtype=oxmera.float64)
    theirs = torch.sparse_csr_tensor(crow, col, values, (3, 4), dtype=torch.float64)
    assert ours.is_sparse_csr and not ours.is_sparse and ours.layout is oxmera.sparse_csr
    np.testing.assert_array_equal(_np(ours.to_dense()), _np(theirs.to_dense()))
    d = np.arange(8.0).reshape(4, 2)
    np.testing.assert_allclose(_np(ours @ oxmera.tensor(d)), _np(theirs @ torch.tensor(d)))
    dense = np.array([[0.0, 1.0], [2.0, 3.0]])
    a, b = oxmera.tensor(dense).to_sparse_csr(), torch.tensor(dense).to_sparse_csr()
    np.testing.assert_array_equal(_np(a.crow_indices()), _np(b.crow_indices()))
    np.testing.assert_array_equal(_np(a.col_indices()), _np(b.col_indices()))
    np.testing.assert_array_equal(_np(ours.to_sparse().to_dense()), _np(theirs.to_dense()))


# -- gradients ---------------------------------------------------------------------------

def _values(n=6, seed=0):
    return oxmera.tensor(np.random.default_rng(seed).uniform(0.5, 2.0, n), requires_grad=True)


@pytest.mark.parametrize("name,fn", [
    ("to_dense", lambda v: oxmera.sparse_coo_tensor(INDEX, v, (3, 4)).to_dense()),
    ("coalesce", lambda v: oxmera.sparse_coo_tensor(INDEX, v, (3, 4)).coalesce().values()),
    ("sum", lambda v: oxmera.sparse.sum(oxmera.sparse_coo_tensor(INDEX, v, (3, 4)))),
    ("sum-dim", lambda v: oxmera.sparse.sum(oxmera.sparse_coo_tensor(INDEX, v, (3, 4)),
                                            1).values()),
    ("softmax", lambda v: oxmera.sparse.softmax(oxmera.sparse_coo_tensor(INDEX, v, (3, 4)),
                                                0).values()),
    ("log_softmax", lambda v: oxmera.sparse.log_softmax(
        oxmera.sparse_coo_tensor(INDEX, v, (3, 4)), 1).values()),
    ("mul-t", lambda v: (oxmera.sparse_coo_tensor(INDEX, v, (3, 4)).t() * 3.0).to_dense()),
    ("add", lambda v: (oxmera.sparse_coo_tensor(INDEX, v, (3, 4))
                       + oxmera.sparse_coo_tensor(INDEX, v * v, (3, 4))).to_dense()),
])
def test_gradients_with_respect_to_values(name, fn):
    v = _values()
    assert gradcheck(fn, (v,))
    assert gradgradcheck(fn, (v,))


def test_to_sparse_gradient_with_respect_to_the_dense_tensor():
    # Gradients reach the stored (nonzero) entries only, as torch.sparse.mm's: every
    # entry is nonzero here, so finite differences keep the pattern.
    x = oxmera.tensor([[0.5, 1.5, -2.0], [2.0, 0.25, -1.0]], dtype=oxmera.float64,
                      requires_grad=True)
    w = oxmera.tensor(np.arange(6.0).reshape(3, 2))

    def fn(x):
        return x.to_sparse() @ w
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_sparse_leaf_gradient_is_sparse_as_torch_sparse_mm():
    torch = _torch()
    d = np.random.default_rng(3).normal(size=(4, 2))
    ours = oxmera.sparse_coo_tensor(INDEX, np.array(VALUES), (3, 4), requires_grad=True)
    theirs = torch.sparse_coo_tensor(torch.tensor(INDEX), torch.tensor(np.array(VALUES)), (3, 4),
                                     requires_grad=True)
    assert ours.is_leaf and ours.requires_grad and ours.grad is None
    (oxmera.sparse.mm(ours, oxmera.tensor(d)) ** 2).sum().backward()
    (torch.sparse.mm(theirs, torch.tensor(d)) ** 2).sum().backward()
    assert ours.grad.layout is oxmera.sparse_coo
    np.testing.assert_allclose(_np(ours.grad.to_dense()), _np(theirs.grad.to_dense()))
    ours.grad = None
    assert ours.grad is None


# -- errors ----------------------------------------------------------------------------

def test_construction_errors():
    with pytest.raises(RuntimeError, match="same nnz"):
        oxmera.sparse_coo_tensor(INDEX, VALUES[:5], (3, 4))
    with pytest.raises(RuntimeError, match="for dim 0, size is 2 but found index 2"):
        oxmera.sparse_coo_tensor(INDEX, VALUES, (2, 4))
    with pytest.raises(RuntimeError, match="found index -1"):
        oxmera.sparse_coo_tensor([[0, -1]], [1.0, 2.0], (3,))
    with pytest.raises(RuntimeError, match="integer"):
        oxmera.sparse_coo_tensor(np.array(INDEX, dtype=float), VALUES, (3, 4))
    with pytest.raises(RuntimeError, match="number of dimensions"):
        oxmera.sparse_coo_tensor(INDEX, VALUES, (3, 4, 5))
    with pytest.raises(RuntimeError, match="device"):
        oxmera.sparse_coo_tensor(INDEX, VALUES, (3, 4), device="cuda")
    with pytest.raises(RuntimeError, match="crow_indices"):
        oxmera.sparse_csr_tensor([0, 3, 2], [0, 1], [1.0, 2.0], (2, 2))


def test_every_other_op_names_itself():
    s = oxmera.sparse_coo_tensor(INDEX, VALUES, (3, 4))
    for call, name in [(lambda: oxmera.exp(s), "exp"), (lambda: s.exp(), "exp"),
                       (lambda: s.view(-1), "view"), (lambda: oxmera.cat([s, s]), "cat"),
                       (lambda: oxmera.ones(3, 4) * s, "mul"),
                       (lambda: oxmera.nn.functional.relu(s), "relu"),
                       (lambda: oxmera.nn.functional.linear(s, oxmera.ones(2, 4)), "linear"),
                       (lambda: s @ s, "matmul of two sparse tensors"),
                       (lambda: s * oxmera.ones(3, 4), "mul")]:
        with pytest.raises(NotImplementedError, match=rf"^{name}.*sparse"):
            call()
    with pytest.raises(AttributeError):
        s.no_such_attribute
    with pytest.raises(TypeError, match="to_dense"):
        np.asarray(s)
    with pytest.raises(TypeError, match="to_dense"):
        s.numpy()
    with pytest.raises(RuntimeError, match="uncoalesced"):
        s.indices()
    with pytest.raises(RuntimeError, match="uncoalesced"):
        s.values()
    with pytest.raises(RuntimeError, match="add\\(dense, sparse\\)"):
        s + oxmera.ones(3, 4)
    with pytest.raises(RuntimeError, match=r"\(3, 4\).*\(3,\)"):
        s @ oxmera.ones(3)


def test_without_scipy_the_product_says_how_to_get_it(monkeypatch):
    s = oxmera.sparse_coo_tensor(INDEX, VALUES, (3, 4))
    monkeypatch.setitem(sys.modules, "scipy.sparse", None)
    with pytest.raises(ImportError, match=r"oxmera\[scipy\]"):
        s @ oxmera.ones(4, 1)
    # what needs no product works without SciPy
    assert s.coalesce()._nnz() == 5


# -- a graph network ---------------------------------------------------------------------

def _normalized_adjacency(n, rng):
    """A_hat = D^-1/2 (A + I) D^-1/2 of a random undirected graph, as COO parts."""
    a = np.triu(rng.random((n, n)) < 0.3, 1)
    a = (a | a.T | np.eye(n, dtype=bool)).astype(np.float64)
    scale = 1 / np.sqrt(a.sum(1))
    a_hat = a * scale[:, None] * scale[None, :]
    rows, cols = np.nonzero(a_hat)
    return np.stack([rows, cols]), a_hat[rows, cols]


def test_gcn_trains_as_in_torch():
    torch = _torch()
    rng = np.random.default_rng(7)
    n, features, hidden, classes = 12, 5, 8, 3
    index, values = _normalized_adjacency(n, rng)
    x = rng.normal(size=(n, features))
    labels = rng.integers(0, classes, n)
    w1 = rng.normal(size=(features, hidden)) * 0.5
    w2 = rng.normal(size=(hidden, classes)) * 0.5

    def train(lib, spmm):
        a_hat = lib.sparse_coo_tensor(lib.tensor(index), lib.tensor(values), (n, n))
        params = [lib.tensor(w1, requires_grad=True), lib.tensor(w2, requires_grad=True)]
        features_t, target = lib.tensor(x), lib.tensor(labels)
        optimizer = lib.optim.Adam(params, lr=0.05)
        losses = []
        for _ in range(5):
            optimizer.zero_grad()
            h = lib.relu(spmm(lib, a_hat, features_t @ params[0]))
            logits = spmm(lib, a_hat, h @ params[1])
            loss = lib.nn.functional.cross_entropy(logits, target)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        return losses

    for spmm in (lambda lib, a, d: a @ d, lambda lib, a, d: lib.sparse.mm(a, d),
                 lambda lib, a, d: lib.spmm(a, d)):
        ours, theirs = train(oxmera, spmm), train(torch, spmm)
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-7)
        assert ours[-1] < ours[0]


def test_gcn_layer_gradients_with_respect_to_adjacency_values_and_weights():
    rng = np.random.default_rng(11)
    index, values = _normalized_adjacency(6, rng)
    x = oxmera.tensor(rng.normal(size=(6, 3)))
    v = oxmera.tensor(values, requires_grad=True)
    w = oxmera.tensor(rng.normal(size=(3, 2)), requires_grad=True)

    def layer(v, w):
        return oxmera.sparse_coo_tensor(index, v, (6, 6)) @ (x @ w)
    assert gradcheck(layer, (v, w))
    assert gradgradcheck(layer, (v, w))


def test_legacy_constructors():
    s = oxmera.sparse.FloatTensor(oxmera.tensor(INDEX), oxmera.tensor(np.array(VALUES)),
                                  oxmera.Size([3, 4]))
    assert s.dtype == oxmera.float32 and isinstance(s, oxmera.sparse.FloatTensor)
    assert not isinstance(s, oxmera.sparse.DoubleTensor)
    np.testing.assert_allclose(s.to_dense().numpy(), _dense_reference(), rtol=1e-6)
    empty = oxmera.sparse.DoubleTensor(2, 5)
    assert empty.shape == (2, 5) and empty._nnz() == 0 and empty.dtype == oxmera.float64
    np.testing.assert_array_equal((empty @ oxmera.ones(5, 1, dtype=oxmera.float64)).numpy(),
                                  np.zeros((2, 1)))
    with pytest.raises(TypeError, match="FloatTensor"):
        oxmera.sparse.FloatTensor(oxmera.tensor(INDEX))


def test_graph_through_a_sparse_product_is_freed_without_gc():
    import gc
    import weakref
    gc.disable()
    try:
        v = oxmera.tensor(np.array(VALUES), requires_grad=True)
        out = oxmera.sparse_coo_tensor(INDEX, v, (3, 4)) @ oxmera.ones(4, 2,
                                                                     dtype=oxmera.float64)
        node = weakref.ref(out.grad_fn)
        del out
        assert node() is None
    finally:
        gc.enable()
