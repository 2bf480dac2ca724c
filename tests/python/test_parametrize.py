"""cgrad.nn.utils.parametrize / parametrizations and the hook-based weight_norm /
spectral_norm against torch: forward values and gradients with identical weights,
state_dict keys, the class swap, optimizer steps, remove_parametrizations, caching,
and the exception types of bad input."""
import copy
import pickle
import warnings

import numpy as np
import pytest
import torch

import cgrad
from nn_compare import to_numpy

import cgrad.nn.utils.parametrize as CP
import torch.nn.utils.parametrize as TP
import cgrad.nn.utils.parametrizations as CPS
import torch.nn.utils.parametrizations as TPS

LIBS = {"torch": torch, "cgrad": cgrad}


def _close(c, t, atol=1e-9):
    np.testing.assert_allclose(to_numpy(c), to_numpy(t), rtol=1e-6, atol=atol)


def _copy_into(tm, cm):
    """Copy every tensor of torch's state dict into cgrad's (keys must agree)."""
    tsd = tm.state_dict()
    assert list(cm.state_dict()) == list(tsd)
    cm.load_state_dict({k: cgrad.tensor(to_numpy(v)) for k, v in tsd.items()})


def _input(*shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    return torch.tensor(a), cgrad.tensor(a, dtype=cgrad.float64)


def _grads_match(cm, tm):
    cnames = dict(cm.named_parameters())
    tnames = dict(tm.named_parameters())
    assert list(cnames) == list(tnames)
    for k, tp in tnames.items():
        assert (cnames[k].grad is None) == (tp.grad is None), k
        if tp.grad is not None:
            _close(cnames[k].grad, tp.grad)


def _make_parametrizations(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).mT

        def right_inverse(self, a):
            return a.triu()

    class Scale(lib.nn.Module):
        def __init__(self, s):
            super().__init__()
            self.s = s

        def forward(self, x):
            return x * self.s

        def right_inverse(self, a):
            return a / self.s

    class Split(lib.nn.Module):  # right_inverse returns two tensors
        def forward(self, a, b):
            return a + b.tanh()

        def right_inverse(self, w):
            return w * 0.5, w * 0.25

    class Grow(lib.nn.Module):  # changes the shape
        def forward(self, x):
            return lib.cat([x, x], dim=0)

    class ToInt(lib.nn.Module):  # changes the dtype
        def forward(self, x):
            return x.to(lib.int64)

    return {"Symmetric": Symmetric, "Scale": Scale, "Split": Split, "Grow": Grow, "ToInt": ToInt}


P = {name: _make_parametrizations(lib) for name, lib in LIBS.items()}


def _linear_pair(n_in=4, n_out=4, **kw):
    torch.manual_seed(0)
    tm = torch.nn.Linear(n_in, n_out, **kw).double()
    cm = cgrad.nn.Linear(n_in, n_out, **kw).double()
    _copy_into(tm, cm)
    return tm, cm


# ---------------------------------------------------------------- parametrize

def test_register_swaps_the_class_and_matches_torch():
    tm, cm = _linear_pair()
    w = cm.weight
    TP.register_parametrization(tm, "weight", P["torch"]["Symmetric"]())
    CP.register_parametrization(cm, "weight", P["cgrad"]["Symmetric"]())
    assert type(cm).__name__ == type(tm).__name__ == "ParametrizedLinear"
    assert isinstance(cm, cgrad.nn.Linear)
    assert CP.type_before_parametrizations(cm) is cgrad.nn.Linear
    assert CP.is_parametrized(cm) and CP.is_parametrized(cm, "weight") and not CP.is_parametrized(cm, "bias")
    assert cm.parametrizations.weight.original is w  # the same Parameter object, now holding triu(w)
    assert isinstance(cm.parametrizations.weight, CP.ParametrizationList)
    assert list(cm.state_dict()) == list(tm.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert [n for n, _ in cm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    _close(cm.parametrizations.weight.original, tm.parametrizations.weight.original)
    _close(cm.weight, tm.weight)
    tx, cx = _input(3, 4)
    tm(tx).pow(2).sum().backward()
    cm(cx).pow(2).sum().backward()
    _grads_match(cm, tm)
    assert "parametrizations" in repr(cm) and "ParametrizationList" in repr(cm)


def test_optimizer_steps_on_the_original_match_torch():
    tm, cm = _linear_pair()
    TP.register_parametrization(tm, "weight", P["torch"]["Symmetric"]())
    CP.register_parametrization(cm, "weight", P["cgrad"]["Symmetric"]())
    topt = torch.optim.SGD(tm.parameters(), lr=0.1, momentum=0.9)
    copt = cgrad.optim.SGD(cm.parameters(), lr=0.1, momentum=0.9)
    for step in range(3):
        tx, cx = _input(5, 4, seed=step)
        for opt, m, x in ((topt, tm, tx), (copt, cm, cx)):
            opt.zero_grad()
            m(x).pow(2).mean().backward()
            opt.step()
    _close(cm.weight, tm.weight)
    _close(cm.weight, cm.weight.mT)  # still symmetric


def test_optimizer_made_before_registering_keeps_training_the_weight():
    _, cm = _linear_pair()
    opt = cgrad.optim.SGD(cm.parameters(), lr=0.5)
    CP.register_parametrization(cm, "weight", P["cgrad"]["Scale"](2.0))
    before = cm.weight.detach().clone()
    cm(cgrad.ones(2, 4, dtype=cgrad.float64)).sum().backward()
    opt.step()
    assert not cgrad.allclose(cm.weight, before)


def test_assignment_goes_through_right_inverse():
    tm, cm = _linear_pair()
    TP.register_parametrization(tm, "weight", P["torch"]["Scale"](3.0))
    CP.register_parametrization(cm, "weight", P["cgrad"]["Scale"](3.0))
    a = np.arange(16.0).reshape(4, 4)
    tm.weight = torch.tensor(a)
    cm.weight = cgrad.tensor(a, dtype=cgrad.float64)
    _close(cm.parametrizations.weight.original, tm.parametrizations.weight.original)
    _close(cm.weight, a)
    with pytest.raises(KeyError):
        tm.weight = torch.nn.Parameter(torch.tensor(a))
    with pytest.raises(KeyError):
        cm.weight = cgrad.nn.Parameter(cgrad.tensor(a, dtype=cgrad.float64))


def test_right_inverse_returning_a_tuple():
    tm, cm = _linear_pair()
    TP.register_parametrization(tm, "weight", P["torch"]["Split"]())
    CP.register_parametrization(cm, "weight", P["cgrad"]["Split"]())
    keys = ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    assert list(cm.state_dict()) == list(tm.state_dict()) == keys
    plist = cm.parametrizations.weight
    assert not plist.is_tensor and plist.ntensors == 2
    assert isinstance(plist.original0, cgrad.nn.Parameter) and plist.original0.requires_grad
    _close(cm.weight, tm.weight)
    tx, cx = _input(3, 4)
    tm(tx).sum().backward()
    cm(cx).sum().backward()
    _grads_match(cm, tm)
    with pytest.raises(ValueError, match="sequence of tensors"):
        TP.remove_parametrizations(tm, "weight", leave_parametrized=False)
    with pytest.raises(ValueError, match="sequence of tensors"):
        CP.remove_parametrizations(cm, "weight", leave_parametrized=False)
    TP.remove_parametrizations(tm, "weight")
    CP.remove_parametrizations(cm, "weight")
    assert list(cm.state_dict()) == list(tm.state_dict()) == ["bias", "weight"]
    _close(cm.weight, tm.weight)
    assert isinstance(cm.weight, cgrad.nn.Parameter)


def test_chained_parametrizations():
    tm, cm = _linear_pair()
    for lib, m, mod in ((torch, tm, TP), (cgrad, cm, CP)):
        name = "torch" if lib is torch else "cgrad"
        mod.register_parametrization(m, "weight", P[name]["Symmetric"]())
        mod.register_parametrization(m, "weight", P[name]["Scale"](0.5))
    assert len(cm.parametrizations.weight) == 2
    _close(cm.weight, tm.weight)
    tx, cx = _input(2, 4)
    tm(tx).sum().backward()
    cm(cx).sum().backward()
    _grads_match(cm, tm)


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations(leave):
    tm, cm = _linear_pair()
    w = cm.weight
    TP.register_parametrization(tm, "weight", P["torch"]["Scale"](2.0))
    CP.register_parametrization(cm, "weight", P["cgrad"]["Scale"](2.0))
    out = CP.remove_parametrizations(cm, "weight", leave_parametrized=leave)
    TP.remove_parametrizations(tm, "weight", leave_parametrized=leave)
    assert out is cm and type(cm) is cgrad.nn.Linear and not hasattr(cm, "parametrizations")
    assert cm.weight is w and isinstance(cm.weight, cgrad.nn.Parameter)
    assert list(cm.state_dict()) == list(tm.state_dict()) == ["bias", "weight"]
    _close(cm.weight, tm.weight)
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        TP.remove_parametrizations(tm, "weight")
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        CP.remove_parametrizations(cm, "weight")


def test_removing_one_of_two_keeps_the_class():
    _, cm = _linear_pair()
    CP.register_parametrization(cm, "weight", P["cgrad"]["Scale"](2.0))
    CP.register_parametrization(cm, "bias", P["cgrad"]["Scale"](2.0))
    CP.remove_parametrizations(cm, "weight")
    assert type(cm).__name__ == "ParametrizedLinear" and CP.is_parametrized(cm, "bias")
    CP.remove_parametrizations(cm, "bias")
    assert type(cm) is cgrad.nn.Linear


def test_a_buffer_can_be_parametrized():
    mods = {}
    for name, lib, mod in (("torch", torch, TP), ("cgrad", cgrad, CP)):
        m = lib.nn.BatchNorm1d(3)
        mod.register_parametrization(m, "running_var", P[name]["Scale"](2.0))
        mods[name] = m
    assert list(mods["cgrad"].state_dict()) == list(mods["torch"].state_dict())
    assert "running_var" not in dict(mods["cgrad"].named_parameters())
    _close(mods["cgrad"].running_var, mods["torch"].running_var)


def test_cached_computes_once_per_block():
    calls = []

    class Count(cgrad.nn.Module):
        def forward(self, x):
            calls.append(1)
            return x * 2

    _, cm = _linear_pair()
    CP.register_parametrization(cm, "weight", Count())
    calls.clear()
    cm.weight
    cm.weight
    assert len(calls) == 2
    calls.clear()
    with CP.cached():
        a = cm.weight
        b = cm.weight
        with CP.cached():
            c = cm.weight
    assert len(calls) == 1 and a is b is c
    cm.weight
    assert len(calls) == 2


def test_transfer_parametrizations_and_params():
    tm, cm = _linear_pair()
    TP.register_parametrization(tm, "weight", P["torch"]["Symmetric"]())
    CP.register_parametrization(cm, "weight", P["cgrad"]["Symmetric"]())
    ct = cgrad.nn.Linear(4, 4).double()
    tt = torch.nn.Linear(4, 4).double()
    assert CP.transfer_parametrizations_and_params(cm, ct) is ct
    TP.transfer_parametrizations_and_params(tm, tt)
    assert ct.parametrizations.weight.original is cm.parametrizations.weight.original
    assert list(ct.state_dict()) == list(tt.state_dict())
    _close(ct.weight, tt.weight)
    plain = cgrad.nn.Linear(4, 4)
    assert CP.transfer_parametrizations_and_params(plain, ct) is ct  # nothing to transfer


def test_deepcopy_works_and_pickle_refuses():
    _, cm = _linear_pair()
    CP.register_parametrization(cm, "weight", P["cgrad"]["Symmetric"]())
    twin = copy.deepcopy(cm)
    assert type(twin).__name__ == "ParametrizedLinear"
    _close(twin.weight, cm.weight)
    assert twin.parametrizations.weight.original is not cm.parametrizations.weight.original
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(cm)


def test_bad_input_raises_torch_exception_types():
    tm, cm = _linear_pair()
    for name, lib, m, mod in (("torch", torch, tm, TP), ("cgrad", cgrad, cm, CP)):
        with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element"):
            mod.register_parametrization(m, "wieght", P[name]["Scale"](2.0))
        with pytest.raises(AttributeError):
            mod.register_parametrization(42, "weight", P[name]["Scale"](2.0))
        with pytest.raises(AttributeError):
            mod.register_parametrization(m, "weight", lambda x: x)
        with pytest.raises(ValueError, match="may not change the shape"):
            mod.register_parametrization(m, "weight", P[name]["Grow"]())
        with pytest.raises(ValueError, match="may not change the dtype"):
            mod.register_parametrization(m, "weight", P[name]["ToInt"]())
        assert not mod.is_parametrized(m)
        mod.register_parametrization(m, "weight", P[name]["Grow"](), unsafe=True)
        assert tuple(m.weight.shape) == (8, 4)
        with pytest.raises(ValueError, match="may not change the shape"):  # chaining checks too
            mod.register_parametrization(m, "weight", P[name]["Grow"]())
        with pytest.raises(ValueError, match="does not have a parametrization on bias"):
            mod.remove_parametrizations(m, "bias")
    with pytest.raises(ValueError, match="requires one or more modules"):
        CP.ParametrizationList([], cgrad.ones(2))
    with pytest.raises(AttributeError, match="'module' must be an nn.Module"):
        CP.register_parametrization("linear", "weight", P["cgrad"]["Scale"](2.0))


def test_right_inverse_missing_makes_assignment_fail():
    class NoInverse(cgrad.nn.Module):
        def forward(self, x):
            return x * 2

    _, cm = _linear_pair()
    CP.register_parametrization(cm, "weight", NoInverse())
    with pytest.raises(RuntimeError, match="does not implement right_inverse"):
        cm.weight = cgrad.zeros(4, 4, dtype=cgrad.float64)


def test_parametrization_follows_train_mode():
    _, cm = _linear_pair()
    cm.eval()
    CP.register_parametrization(cm, "weight", P["cgrad"]["Scale"](2.0))
    assert not cm.parametrizations.weight[0].training
    cm.train()
    assert cm.parametrizations.weight[0].training


# ---------------------------------------------------------------- parametrizations.weight_norm

def _conv_pair(cls="Conv2d", *args):
    torch.manual_seed(1)
    tm = getattr(torch.nn, cls)(*args).double()
    cm = getattr(cgrad.nn, cls)(*args).double()
    _copy_into(tm, cm)
    return tm, cm


@pytest.mark.parametrize("dim", [0, 1, None, -1])
@pytest.mark.parametrize("kind", ["linear", "conv"])
def test_weight_norm_matches_torch(dim, kind):
    if kind == "linear":
        tm, cm = _linear_pair(4, 3)
        tx, cx = _input(5, 4)
    else:
        tm, cm = _conv_pair("Conv2d", 2, 3, 3)
        tx, cx = _input(2, 2, 5, 5)
    assert TPS.weight_norm(tm, dim=dim) is tm
    assert CPS.weight_norm(cm, dim=dim) is cm
    assert list(cm.state_dict()) == list(tm.state_dict())
    _close(cm.parametrizations.weight.original0, tm.parametrizations.weight.original0)
    _close(cm.parametrizations.weight.original1, tm.parametrizations.weight.original1)
    _close(cm.weight, tm.weight)
    tm(tx).pow(2).sum().backward()
    cm(cx).pow(2).sum().backward()
    _grads_match(cm, tm)


def test_weight_norm_loads_old_style_state_dicts_and_removes():
    tm, cm = _linear_pair(4, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        old = torch.nn.utils.weight_norm(torch.nn.Linear(4, 3).double())
    old_sd = old.state_dict()
    assert {"weight_g", "weight_v"} <= set(old_sd)
    CPS.weight_norm(cm)
    cm.load_state_dict({k: cgrad.tensor(to_numpy(v)) for k, v in old_sd.items()})
    _close(cm.weight, old.weight)
    w = cm.weight.detach().clone()
    CP.remove_parametrizations(cm, "weight")
    assert list(cm.state_dict()) == ["bias", "weight"]
    _close(cm.weight, w)


# ---------------------------------------------------------------- parametrizations.spectral_norm

@pytest.mark.parametrize("kind", ["linear", "conv", "convT"])
def test_spectral_norm_matches_torch_in_train_and_eval(kind):
    if kind == "linear":
        tm, cm = _linear_pair(5, 3)
        tx, cx = _input(4, 5)
    elif kind == "conv":
        tm, cm = _conv_pair("Conv2d", 2, 3, 3)
        tx, cx = _input(2, 2, 5, 5)
    else:
        tm, cm = _conv_pair("ConvTranspose2d", 2, 3, 3)
        tx, cx = _input(2, 2, 4, 4)
    TPS.spectral_norm(tm, n_power_iterations=2)
    CPS.spectral_norm(cm, n_power_iterations=2)
    keys = list(tm.state_dict())
    assert list(cm.state_dict()) == keys
    assert "parametrizations.weight.0._u" in keys and "parametrizations.weight.0._v" in keys
    if kind == "convT":
        assert cm.parametrizations.weight[0].dim == 1
    _copy_into(tm, cm)  # the random starting vectors differ: take torch's
    for _ in range(3):  # training: every read advances the power iteration
        tm.zero_grad()
        cm.zero_grad()
        tm(tx).pow(2).sum().backward()
        cm(cx).pow(2).sum().backward()
        _grads_match(cm, tm)
        _close(cm.parametrizations.weight[0]._u, tm.parametrizations.weight[0]._u)
        _close(cm.parametrizations.weight[0]._v, tm.parametrizations.weight[0]._v)
    tm.eval()
    cm.eval()
    u = cm.parametrizations.weight[0]._u.clone()
    _close(cm(cx), tm(tx))
    assert cgrad.equal(cm.parametrizations.weight[0]._u, u)  # eval: no power iteration
    mat = to_numpy(cm.weight).reshape(cm.weight.shape[0], -1) if kind != "convT" else \
        np.moveaxis(to_numpy(cm.weight), 1, 0).reshape(cm.weight.shape[1], -1)
    assert abs(np.linalg.svd(mat, compute_uv=False)[0] - 1.0) < 0.1


def test_spectral_norm_errors_match_torch():
    for lib, mod in ((torch, TPS), (cgrad, CPS)):
        with pytest.raises(ValueError, match="has no parameter or buffer with name 'kernel'"):
            mod.spectral_norm(lib.nn.Linear(3, 3), name="kernel")
        with pytest.raises(ValueError, match="n_power_iterations to be positive"):
            mod.spectral_norm(lib.nn.Linear(3, 3), n_power_iterations=0)
        with pytest.raises(IndexError, match="Dimension out of range"):
            mod.spectral_norm(lib.nn.Linear(3, 3), dim=2)


def test_spectral_norm_of_a_vector_normalizes_it():
    tb, cb = torch.nn.Linear(3, 4).double(), cgrad.nn.Linear(3, 4).double()
    cb.load_state_dict({k: cgrad.tensor(to_numpy(v)) for k, v in tb.state_dict().items()})
    TPS.spectral_norm(tb, name="bias")
    CPS.spectral_norm(cb, name="bias")
    assert list(cb.state_dict()) == list(tb.state_dict())
    _close(cb.bias, tb.bias)


# ---------------------------------------------------------------- parametrizations.orthogonal

ORTH_CASES = [("matrix_exp", (4, 4)), ("cayley", (4, 4)), ("householder", (4, 4)),
              ("matrix_exp", (5, 3)), ("cayley", (3, 5)), ("householder", (5, 3)), ("householder", (3, 5)),
              (None, (4, 4)), (None, (5, 3))]


@pytest.mark.parametrize("orth_map,shape", ORTH_CASES)
def test_orthogonal_matches_torch(orth_map, shape):
    tm, cm = _linear_pair(shape[1], shape[0])
    TPS.orthogonal(tm, orthogonal_map=orth_map)
    CPS.orthogonal(cm, orthogonal_map=orth_map)
    assert list(cm.state_dict()) == list(tm.state_dict())
    assert "parametrizations.weight.0.base" in tm.state_dict()
    if shape[0] == shape[1]:  # no random completion: the base itself must agree
        _close(cm.parametrizations.weight[0].base, tm.parametrizations.weight[0].base, atol=1e-9)
    _copy_into(tm, cm)
    q = to_numpy(cm.weight)
    small = min(shape)
    gram = q.T @ q if shape[0] >= shape[1] else q @ q.T
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-10)
    _close(cm.weight, tm.weight)
    # move the original off the identity so the gradient is generic, then compare gradients
    noise = np.random.default_rng(5).standard_normal(tuple(tm.parametrizations.weight.original.shape)) * 0.3
    with torch.no_grad():
        tm.parametrizations.weight.original.add_(torch.tensor(noise))
    with cgrad.no_grad():
        cm.parametrizations.weight.original.add_(cgrad.tensor(noise, dtype=cgrad.float64))
    _close(cm.weight, tm.weight, atol=1e-8)
    tx, cx = _input(3, shape[1])
    tm(tx).pow(2).sum().backward()
    cm(cx).pow(2).sum().backward()
    for (n, cp), (_, tp) in zip(cm.named_parameters(), tm.named_parameters()):
        np.testing.assert_allclose(to_numpy(cp.grad), to_numpy(tp.grad), rtol=1e-6, atol=1e-8)


def test_orthogonal_batched_and_stays_orthogonal_while_training():
    m = cgrad.nn.Module()
    m.weight = cgrad.nn.Parameter(cgrad.randn(2, 4, 4, dtype=cgrad.float64))
    CPS.orthogonal(m, orthogonal_map="cayley")
    opt = cgrad.optim.SGD(m.parameters(), lr=0.1)
    target = cgrad.randn(2, 4, 4, dtype=cgrad.float64)
    for _ in range(3):
        opt.zero_grad()
        (m.weight - target).pow(2).sum().backward()
        opt.step()
    q = to_numpy(m.weight)
    for b in range(2):
        np.testing.assert_allclose(q[b].T @ q[b], np.eye(4), atol=1e-10)


def test_orthogonal_without_trivialization_householder():
    tm, cm = _linear_pair(3, 5)
    TPS.orthogonal(tm, orthogonal_map="householder", use_trivialization=False)
    CPS.orthogonal(cm, orthogonal_map="householder", use_trivialization=False)
    assert list(cm.state_dict()) == list(tm.state_dict()) == ["bias", "parametrizations.weight.original"]
    _close(cm.parametrizations.weight.original, tm.parametrizations.weight.original, atol=1e-9)
    _close(cm.weight, tm.weight, atol=1e-9)
    tm2, cm2 = _linear_pair(4, 4)
    CPS.orthogonal(cm2, orthogonal_map="matrix_exp", use_trivialization=False)
    TPS.orthogonal(tm2, orthogonal_map="matrix_exp", use_trivialization=False)
    with pytest.raises(NotImplementedError, match="use_trivialization=False"):
        tm2.weight = torch.eye(4, dtype=torch.float64)
    with pytest.raises(NotImplementedError, match="use_trivialization=False"):
        cm2.weight = cgrad.eye(4, dtype=cgrad.float64)


def test_orthogonal_assignment_and_errors():
    tm, cm = _linear_pair(4, 4)
    TPS.orthogonal(tm)
    CPS.orthogonal(cm)
    q, _ = np.linalg.qr(np.random.default_rng(2).standard_normal((4, 4)))
    tm.weight = torch.tensor(q)
    cm.weight = cgrad.tensor(q, dtype=cgrad.float64)
    _close(cm.weight, q, atol=1e-12)
    _close(cm.weight, tm.weight, atol=1e-12)
    for lib, mod in ((torch, TPS), (cgrad, CPS)):
        with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
            mod.orthogonal(lib.nn.Linear(3, 3), orthogonal_map="qr")
        with pytest.raises(ValueError, match="Expected a matrix or batch of matrices"):
            mod.orthogonal(lib.nn.Linear(3, 3), name="bias")
        with pytest.raises(ValueError, match="has no parameter or buffer"):
            mod.orthogonal(lib.nn.Linear(3, 3), name="kernel")
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices of shape"):
        cm.weight = cgrad.eye(3, dtype=cgrad.float64)


# ---------------------------------------------------------------- hook-based weight_norm / spectral_norm

def test_hook_weight_norm_matches_torch_and_removes():
    tm, cm = _linear_pair(4, 3)
    with pytest.warns(FutureWarning, match="deprecated"):
        torch.nn.utils.weight_norm(tm, dim=0)
    with pytest.warns(FutureWarning, match="deprecated"):
        cgrad.nn.utils.weight_norm(cm, dim=0)
    assert [n for n, _ in cm.named_parameters()] == [n for n, _ in tm.named_parameters()] == \
        ["bias", "weight_g", "weight_v"]
    _close(cm.weight_g, tm.weight_g)
    tx, cx = _input(2, 4)
    tm(tx).pow(2).sum().backward()
    cm(cx).pow(2).sum().backward()
    _grads_match(cm, tm)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
            cgrad.nn.utils.weight_norm(cm)
    torch.nn.utils.remove_weight_norm(tm)
    assert cgrad.nn.utils.remove_weight_norm(cm) is cm
    assert [n for n, _ in cm.named_parameters()] == ["bias", "weight"]
    _close(cm.weight, tm.weight)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        cgrad.nn.utils.remove_weight_norm(cm)


def test_hook_spectral_norm_matches_torch_and_removes():
    tm, cm = _conv_pair("Conv2d", 2, 3, 3)
    torch.nn.utils.spectral_norm(tm)
    cgrad.nn.utils.spectral_norm(cm)
    keys = list(tm.state_dict())
    assert list(cm.state_dict()) == keys == ["bias", "weight_orig", "weight_u", "weight_v"]
    assert cm.state_dict()._metadata[""]["spectral_norm"] == {"weight.version": 1}
    _copy_into(tm, cm)
    tx, cx = _input(2, 2, 5, 5)
    for _ in range(2):
        tm.zero_grad()
        cm.zero_grad()
        tm(tx).sum().backward()
        cm(cx).sum().backward()
        _grads_match(cm, tm)
        _close(cm.weight_u, tm.weight_u)
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        cgrad.nn.utils.spectral_norm(cm)
    torch.nn.utils.remove_spectral_norm(tm)
    cgrad.nn.utils.remove_spectral_norm(cm)
    assert list(cm.state_dict()) == list(tm.state_dict()) == ["bias", "weight"]
    _close(cm.weight, tm.weight)
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
        cgrad.nn.utils.remove_spectral_norm(cm)


# ---------------------------------------------------------------- the matrix routines behind orthogonal

def test_matrix_routines_match_torch_and_finite_differences():
    from cgrad.nn.utils import _matrix_ops as M
    rng = np.random.default_rng(4)
    for shape in [(4, 4), (2, 3, 3)]:
        a = rng.standard_normal(shape) * 2
        b = rng.standard_normal(shape)
        ca, cb = cgrad.tensor(a, dtype=cgrad.float64), cgrad.tensor(b, dtype=cgrad.float64)
        _close(M.matrix_exp(ca), torch.matrix_exp(torch.tensor(a)), atol=1e-12)
        _close(M.solve(ca, cb), torch.linalg.solve(torch.tensor(a), torch.tensor(b)), atol=1e-12)
        r, tau = M.geqrf(ca)
        tr, ttau = torch.geqrf(torch.tensor(a))
        _close(r, tr, atol=1e-12)
        _close(tau, ttau, atol=1e-12)
        _close(M.householder_product(r, tau), torch.linalg.householder_product(tr, ttau), atol=1e-12)
    a = cgrad.tensor(rng.standard_normal((3, 3)), dtype=cgrad.float64, requires_grad=True)
    b = cgrad.tensor(rng.standard_normal((3, 2)), dtype=cgrad.float64, requires_grad=True)
    t = cgrad.tensor(rng.standard_normal(2), dtype=cgrad.float64, requires_grad=True)
    c = cgrad.tensor(rng.standard_normal((4, 2)), dtype=cgrad.float64, requires_grad=True)
    assert cgrad.autograd.gradcheck(M.matrix_exp, (a,))
    assert cgrad.autograd.gradcheck(M.solve, (a, b))
    assert cgrad.autograd.gradgradcheck(M.solve, (a, b))
    assert cgrad.autograd.gradcheck(M.householder_product, (c, t))
    with pytest.raises(RuntimeError, match="singular"):
        M.solve(cgrad.zeros(2, 2, dtype=cgrad.float64), cgrad.ones(2, 1, dtype=cgrad.float64))
    with pytest.raises(RuntimeError, match="square"):
        M.matrix_exp(cgrad.ones(2, 3))
