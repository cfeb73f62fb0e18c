"""Under `genesis trace --torch`, torch.distributed, torch.nn.parallel's DistributedDataParallel
and DataParallel and torch.utils.data.distributed's DistributedSampler are genesis's, and
`genesis compat` says a DDP script is served in full."""
from pathlib import Path

from typer.testing import CliRunner

import genesis
import genesis.distributed
from genesis.compat import serve_torch
from genesis.compat.scan import missing
from genesis_cli.app import app

SCRIPT = Path(__file__).parent / "data" / "ddp_training.py"


def test_the_distributed_imports_of_a_pytorch_script_are_genesis():
    with serve_torch():
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        from torch.utils.data.distributed import DistributedSampler
        assert dist.init_process_group is genesis.distributed.init_process_group
        assert torch.distributed.is_available() and not dist.is_initialized()
        assert DDP is genesis.nn.parallel.DistributedDataParallel
        assert torch.nn.parallel.distributed.DistributedDataParallel is DDP
        assert torch.nn.DataParallel is torch.nn.parallel.DataParallel is genesis.nn.DataParallel
        assert DistributedSampler is torch.utils.data.DistributedSampler
        assert dist.ReduceOp.SUM is genesis.distributed.ReduceOp.SUM
        assert dist.group.WORLD is None


def test_the_stand_in_sees_the_group_as_it_changes():
    """`dist.group.WORLD` is read from the group class each time, not kept from a first look."""
    with serve_torch():
        import torch.distributed as dist
        assert dist.group.WORLD is None
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", world_size=1, rank=0)
        try:
            assert dist.group.WORLD is not None and dist.is_initialized()
        finally:
            dist.destroy_process_group()
        assert dist.group.WORLD is None


def test_the_names_are_served():
    for name in ("torch.distributed.all_reduce", "torch.distributed.ReduceOp.AVG",
                 "torch.distributed.group.WORLD", "torch.nn.parallel.DistributedDataParallel",
                 "torch.nn.DataParallel", "torch.utils.data.distributed.DistributedSampler",
                 "torch.utils.data.DistributedSampler"):
        assert missing(name) is None, name


def test_genesis_compat_serves_the_ddp_script_in_full():
    result = CliRunner().invoke(app, ["compat", "--no-color", str(SCRIPT)])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "genesis serves all 28 torch names used in 1 script" in said
