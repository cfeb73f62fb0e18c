"""`genesis.profiler`, served as `torch.profiler`: time the ops, backward nodes and
labelled blocks of a run, as PyTorch's profiler does.

>>> import genesis
>>> from genesis.profiler import profile, record_function, ProfilerActivity
>>> model = genesis.nn.Linear(4, 2)
>>> with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
...     with record_function("forward"):
...         loss = model(genesis.randn(8, 4)).sum()
...     loss.backward()
>>> [(row.key, row.count) for row in prof.key_averages()]
[('forward', 1), ('genesis::linear', 1), ('genesis::sum', 1), ('SumBackward', 1), ('LinearBackward', 1)]
>>> table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=5)

Nothing is paid while no profiler runs: the recorder joins genesis's hook points
(genesis.profiler.recorder) only between a profiler's start and stop.
"""
from .actions import ProfilerAction, ProfilerActivity, schedule, supported_activities
from .chrome_trace import tensorboard_trace_handler
from .events import EventList, FunctionEvent, FunctionEventAvg
from .recorder import record_function
from .step_profiler import profile

__all__ = ["profile", "record_function", "schedule", "ProfilerAction", "ProfilerActivity",
           "tensorboard_trace_handler", "supported_activities", "EventList", "FunctionEvent",
           "FunctionEventAvg"]
