"""cgrad.optim: the optimizers of torch.optim, learning-rate schedulers
(cgrad.optim.lr_scheduler) and weight averaging (cgrad.optim.swa_utils).
SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, Rprop and
ASGD step as fused C calls, one per parameter group; Adafactor runs PyTorch's
per-parameter algorithm in tensor ops (optim/_composed.py); LBFGS works on the
flattened parameters with a closure; Muon orthogonalises 2-D updates in
bfloat16; SparseAdam refuses dense gradients, as PyTorch's does (cgrad has no
sparse tensors)."""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam
from .adamw import AdamW
from .rmsprop import RMSprop
from .adagrad import Adagrad
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .radam import RAdam
from .rprop import Rprop
from .sparse_adam import SparseAdam
from . import lr_scheduler, swa_utils

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adafactor", "Adamax", "ASGD", "LBFGS", "Muon", "NAdam",
           "RAdam", "Rprop", "SparseAdam", "lr_scheduler",
           "swa_utils"]
