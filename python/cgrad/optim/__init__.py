"""cgrad.optim: optimizers (SGD, Adam, AdamW, RMSprop, Adagrad) whose steps are
fused C calls, one per parameter group, and learning-rate schedulers
(cgrad.optim.lr_scheduler), mirroring torch.optim."""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam
from .adamw import AdamW
from .rmsprop import RMSprop
from .adagrad import Adagrad
from . import lr_scheduler

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
