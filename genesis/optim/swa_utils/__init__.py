"""Stochastic weight averaging and weight EMAs, as `torch.optim.swa_utils`: `AveragedModel`
(a copy of a model holding the average of its weights), the averaging rules it takes
(`get_swa_avg_fn`, `get_ema_avg_fn`, and the in-place `get_swa_multi_avg_fn`,
`get_ema_multi_avg_fn`), `update_bn` (recompute BatchNorm statistics for the averaged
weights) and the `SWALR` scheduler.

>>> import genesis
>>> from genesis.optim.swa_utils import SWALR, AveragedModel, update_bn
>>> model = genesis.nn.Sequential(genesis.nn.Linear(3, 4), genesis.nn.BatchNorm1d(4))
>>> optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
>>> swa_model, swa_scheduler = AveragedModel(model), SWALR(optimizer, swa_lr=0.05)
>>> loader = [genesis.randn(8, 3) for _ in range(4)]
>>> for x in loader:
...     optimizer.zero_grad(); model(x).pow(2).mean().backward(); optimizer.step()
...     swa_model.update_parameters(model); swa_scheduler.step()
>>> update_bn(loader, swa_model)
>>> swa_model.n_averaged
tensor(4)
"""
from .averaged_model import AveragedModel
from .averaging import get_ema_avg_fn, get_ema_multi_avg_fn, get_swa_avg_fn, get_swa_multi_avg_fn
from .swalr import SWALR
from .update_bn import update_bn

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]
