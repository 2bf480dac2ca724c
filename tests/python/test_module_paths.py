"""Library import paths: every class or function that torch.nn and cgrad.nn
both have is importable from the torch.nn.modules.<file> path PyTorch defines
it in, as the same object; likewise the other commonly imported submodule
paths (torch.nn.parameter, torch.optim.optimizer, torch.utils.data.*,
torch.autograd.function, ...), checked against the installed PyTorch."""
import importlib
import inspect
import pkgutil

import pytest
import torch
import torch.nn.modules

import cgrad


def _torch_module_files():
    return sorted(mi.name for mi in pkgutil.iter_modules(torch.nn.modules.__path__) if not mi.name.startswith("_"))


@pytest.mark.parametrize("file", _torch_module_files())
def test_nn_names_live_at_torchs_module_file(file):
    tmod = importlib.import_module(f"torch.nn.modules.{file}")
    defined = [n for n, v in vars(tmod).items()
               if (inspect.isclass(v) or inspect.isfunction(v)) and v.__module__ == tmod.__name__]
    shared = [n for n in defined if not n.startswith("_") and hasattr(cgrad.nn, n)]
    if not shared:
        pytest.skip(f"cgrad.nn has nothing of torch.nn.modules.{file}")
    cmod = importlib.import_module(f"cgrad.nn.modules.{file}")
    for n in shared:
        assert getattr(cmod, n, None) is getattr(cgrad.nn, n), f"cgrad.nn.modules.{file}.{n}"


def test_the_walk_covers_the_layers():
    files = _torch_module_files()
    assert {"activation", "linear", "conv", "loss", "module", "container", "rnn", "transformer"} <= set(files)
    count = sum(1 for f in files for n, v in vars(importlib.import_module(f"torch.nn.modules.{f}")).items()
                if inspect.isclass(v) and v.__module__.endswith(f) and hasattr(cgrad.nn, n))
    assert count >= 100


def test_module_level_private_bases_that_libraries_subclass():
    pairs = [("loss", "_Loss"), ("loss", "_WeightedLoss"), ("batchnorm", "_BatchNorm"), ("batchnorm", "_NormBase"),
             ("conv", "_ConvNd"), ("conv", "_ConvTransposeNd"), ("pooling", "_MaxPoolNd"), ("pooling", "_AvgPoolNd"),
             ("dropout", "_DropoutNd"), ("instancenorm", "_InstanceNorm"), ("utils", "_pair"), ("utils", "_single"),
             ("module", "_IncompatibleKeys")]
    for file, name in pairs:
        assert hasattr(importlib.import_module(f"torch.nn.modules.{file}"), name)
        assert hasattr(importlib.import_module(f"cgrad.nn.modules.{file}"), name), f"{file}.{name}"
    assert issubclass(cgrad.nn.CrossEntropyLoss, cgrad.nn.modules.loss._WeightedLoss)
    assert issubclass(cgrad.nn.BatchNorm2d, cgrad.nn.modules.batchnorm._BatchNorm)


def test_multihead_attention_paths_and_out_proj_type():
    from cgrad.nn.modules.activation import MultiheadAttention
    from cgrad.nn.modules.linear import NonDynamicallyQuantizableLinear
    assert MultiheadAttention is cgrad.nn.MultiheadAttention
    assert issubclass(NonDynamicallyQuantizableLinear, cgrad.nn.Linear)
    assert issubclass(torch.nn.modules.linear.NonDynamicallyQuantizableLinear, torch.nn.Linear)
    m, tm = MultiheadAttention(8, 2), torch.nn.MultiheadAttention(8, 2)
    assert type(m.out_proj) is NonDynamicallyQuantizableLinear
    assert repr(m.out_proj) == repr(tm.out_proj)
    assert sorted(m.state_dict()) == sorted(tm.state_dict())
    lin = NonDynamicallyQuantizableLinear(3, 4, bias=False)
    assert lin.weight.shape == (4, 3) and lin.bias is None and lin(cgrad.ones(2, 3)).shape == (2, 4)


# (module path, names) that PyTorch programs and libraries import from those paths
PATHS = [
    ("nn.parameter", ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"]),
    ("nn.modules.module", ["Module"]),
    ("nn.modules.container", ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]),
    ("nn.init", ["xavier_uniform_", "kaiming_normal_", "zeros_", "calculate_gain"]),
    ("nn.functional", ["relu", "cross_entropy", "scaled_dot_product_attention"]),
    ("nn.utils", ["clip_grad_norm_", "parameters_to_vector"]),
    ("nn.parallel", ["DataParallel", "DistributedDataParallel", "data_parallel"]),
    ("optim.optimizer", ["Optimizer"]),
    ("optim.sgd", ["SGD"]), ("optim.adam", ["Adam"]), ("optim.adamw", ["AdamW"]), ("optim.rmsprop", ["RMSprop"]),
    ("optim.adagrad", ["Adagrad"]),
    ("optim.lr_scheduler", ["LRScheduler", "StepLR", "OneCycleLR", "LambdaLR", "ReduceLROnPlateau"]),
    ("utils.data.dataset", ["Dataset", "TensorDataset", "IterableDataset", "Subset", "ConcatDataset",
                            "random_split"]),
    ("utils.data.dataloader", ["DataLoader", "default_collate", "get_worker_info"]),
    ("utils.data.sampler", ["Sampler", "RandomSampler", "SequentialSampler", "BatchSampler", "SubsetRandomSampler"]),
    ("utils.data._utils.collate", ["default_collate", "default_convert"]),
    ("utils.hooks", ["RemovableHandle"]),
    ("autograd.function", ["Function", "FunctionCtx", "once_differentiable"]),
    ("autograd.grad_mode", ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode"]),
    ("autograd.anomaly_mode", ["detect_anomaly", "set_detect_anomaly"]),
    ("autograd.functional", ["jacobian", "hessian", "vjp", "jvp"]),
    ("amp.grad_scaler", ["GradScaler"]), ("amp.autocast_mode", ["autocast"]),
    ("torch_version", ["TorchVersion"]),
]


@pytest.mark.parametrize("path,names", PATHS, ids=[p for p, _ in PATHS])
def test_common_import_paths(path, names):
    tmod = importlib.import_module(f"torch.{path}")
    cmod = importlib.import_module(f"cgrad.{path}")
    for n in names:
        assert hasattr(tmod, n), f"torch.{path}.{n} (the list is out of date)"
        assert hasattr(cmod, n), f"cgrad.{path}.{n}"
    top = importlib.import_module("cgrad." + path.rsplit(".", 1)[0]) if "." in path else cgrad
    for n in names:  # where the parent package has the name too, it is the same object
        if hasattr(top, n) and not inspect.ismodule(getattr(top, n)):
            assert getattr(top, n) is getattr(cmod, n), f"cgrad.{path}.{n}"
