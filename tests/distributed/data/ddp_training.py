"""A PyTorch DDP training script with the usual boilerplate, written to be launched by
torchrun (it reads RANK, WORLD_SIZE and LOCAL_RANK from the environment), as one process."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def setup():
    rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    dist.init_process_group(backend=backend, rank=rank, world_size=world_size)
    device = torch.device(f"cuda:{local_rank}") if backend == "nccl" else torch.device("cpu")
    return rank, world_size, device


def main():
    rank, world_size, device = setup()
    torch.manual_seed(0)
    x, y = torch.randn(64, 4), torch.randint(0, 3, (64,))
    dataset = TensorDataset(x, y)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(dataset, batch_size=16, sampler=sampler)
    model = DDP(Net().to(device), device_ids=[device.index] if device.type == "cuda" else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        model.train()
        total = torch.zeros(1, device=device)
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(inputs), targets)
            loss.backward()
            optimizer.step()
            total += loss.detach()
        dist.all_reduce(total, op=dist.ReduceOp.SUM)
        if rank == 0:
            print(f"epoch {epoch} loss {total.item() / (len(loader) * world_size):.4f}")
    if rank == 0:
        torch.save(model.module.state_dict(), os.environ.get("CHECKPOINT", "checkpoint.pt"))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
