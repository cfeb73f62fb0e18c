import torch
import torch.fx as fx

graph = fx.symbolic_trace(torch.nn.Identity())
