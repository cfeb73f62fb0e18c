"""A PyTorch training loop profiled as PyTorch's docs show: a schedule, a TensorBoard
trace handler, record_function blocks, and the table printed at the end. The folder for
the traces is the first argument."""
import sys

import torch
import torch.nn as nn
import torch.profiler
from torch.profiler import ProfilerActivity, profile, record_function, tensorboard_trace_handler

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
inputs, targets = torch.randn(32, 8), torch.randint(0, 2, (32,))

with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True,
             profile_memory=True, with_stack=True,
             schedule=torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=1),
             on_trace_ready=tensorboard_trace_handler(sys.argv[1])) as prof:
    for step in range(6):
        with record_function("train_step"):
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(inputs), targets)
            loss.backward()
            optimizer.step()
        prof.step()
        print(f"step {step} loss {loss.item():.4f}")

print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
with torch.autograd.profiler.profile() as evaluation:
    with torch.no_grad():
        model(inputs)
print(evaluation.key_averages().table(sort_by="cpu_time_total", row_limit=5))
