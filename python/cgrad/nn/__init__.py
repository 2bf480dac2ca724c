"""cgrad.nn: neural-network layers (modules), their functional forms
(cgrad.nn.functional), parameter initialisation (cgrad.nn.init) and helpers
(cgrad.nn.utils), data parallelism (cgrad.nn.parallel), mirroring torch.nn."""
from . import functional  # noqa: F401
from . import init  # noqa: F401
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from .modules import *  # noqa: F401,F403 - every layer, as torch.nn exports them
from . import modules  # noqa: F401
from .parallel import DataParallel  # noqa: F401
from . import parallel  # noqa: F401
from . import utils  # noqa: F401
