"""Optimizers (`SGD`, `Adam`, `AdamW`, `RMSprop`, `Adagrad`, `Adadelta`, `LBFGS`) and `lr_scheduler`.

>>> import genesis
>>> model = genesis.nn.Linear(2, 1)
>>> optimizer = genesis.optim.Adam(model.parameters(), lr=1e-2)
>>> loss = model(genesis.ones(4, 2)).sum()
>>> optimizer.zero_grad(); loss.backward(); optimizer.step()
"""
from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "LBFGS", "lr_scheduler"]
