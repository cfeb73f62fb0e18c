"""Optimizers (`SGD`, `Adam`, `AdamW`, `Adamax`, `NAdam`, `RAdam`, `RMSprop`, `Adagrad`,
`Adadelta`, `Adafactor`, `ASGD`, `Rprop`, `LBFGS`, and `SparseAdam`, which refuses the dense gradients
genesis has), `lr_scheduler`, and `swa_utils` (weight averaging: SWA and EMA models).

>>> import genesis
>>> model = genesis.nn.Linear(2, 1)
>>> optimizer = genesis.optim.Adam(model.parameters(), lr=1e-2)
>>> loss = model(genesis.ones(4, 2)).sum()
>>> optimizer.zero_grad(); loss.backward(); optimizer.step()
"""
from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "Adagrad",
           "Adadelta", "Adafactor", "ASGD", "Rprop", "LBFGS", "SparseAdam", "lr_scheduler",
           "swa_utils"]
