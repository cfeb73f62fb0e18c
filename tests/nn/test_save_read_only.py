"""genesis.save over a read-only checkpoint raises PermissionError naming it and keeps it
(an atomic save renames over the target, which the folder alone would allow)."""
import stat

import pytest

import genesis
from genesis import nn


def test_saving_over_a_read_only_file_raises_and_keeps_the_old_checkpoint(tmp_path):
    target = tmp_path / "model.npz"
    genesis.save({"epoch": 1}, target)
    before = target.read_bytes()
    target.chmod(0o444)
    with pytest.raises(PermissionError) as raised:
        genesis.save({"model": nn.Linear(2, 1).state_dict(), "epoch": 2}, target)
    message = str(raised.value)
    assert "genesis.save" in message and "model.npz" in message and "read-only" in message
    assert "chmod u+w" in message and "save elsewhere" in message
    assert raised.value.filename == str(target)
    assert target.read_bytes() == before and stat.S_IMODE(target.stat().st_mode) == 0o444
    assert [path.name for path in tmp_path.iterdir()] == ["model.npz"]
    assert genesis.load(target) == {"epoch": 1}


def test_saving_after_chmod_u_w_works(tmp_path):
    target = tmp_path / "model.npz"
    genesis.save({"epoch": 1}, target)
    target.chmod(0o444)
    target.chmod(0o644)
    genesis.save({"epoch": 2}, target)
    assert genesis.load(target) == {"epoch": 2}
