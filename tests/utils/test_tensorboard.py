"""genesis.utils.tensorboard.SummaryWriter: real TensorBoard event files (read back here
record by record), genesis tensors accepted where PyTorch takes tensors, and a clear error
without tensorboardX."""
import struct
from pathlib import Path

import numpy as np
import pytest

import genesis
from genesis.utils import tensorboard

event_pb2 = pytest.importorskip("tensorboardX.proto.event_pb2", reason="tensorboardX is not installed")


def events(folder: Path) -> list:
    """Every Event in the folder's event files (TFRecord framing: length, crc, data, crc)."""
    found = []
    for path in sorted(folder.rglob("events.out.tfevents.*")):
        data = path.read_bytes()
        offset = 0
        while offset < len(data):
            (length,) = struct.unpack("<Q", data[offset:offset + 8])
            record = data[offset + 12:offset + 12 + length]
            found.append(event_pb2.Event.FromString(record))
            offset += 12 + length + 4
    return found


def test_scalars_histograms_images_and_text_reach_the_event_file(tmp_path):
    with tensorboard.SummaryWriter(str(tmp_path)) as writer:
        for step in range(3):
            writer.add_scalar("loss", genesis.tensor(1.0 / (step + 1)), step)
        writer.add_scalars("lr", {"encoder": genesis.tensor([0.1]), "decoder": 0.2}, 0)
        writer.add_histogram("weights", genesis.randn(100), 0)
        writer.add_image("sample", genesis.rand(3, 8, 8), 0)
        writer.add_text("note", "first run", 0)
    assert writer.get_logdir() == str(tmp_path)
    summaries = [(event.step, value.tag, value) for event in events(tmp_path)
                 for value in event.summary.value]
    losses = [(step, value.simple_value) for step, tag, value in summaries if tag == "loss"]
    assert [step for step, _ in losses] == [0, 1, 2]
    np.testing.assert_allclose([v for _, v in losses], [1.0, 0.5, 1 / 3], rtol=1e-6)
    tags = {tag for _, tag, _ in summaries}
    assert {"weights", "sample", "note/text_summary"} <= tags
    histogram = next(value for _, tag, value in summaries if tag == "weights").histo
    assert histogram.num == 100
    image = next(value for _, tag, value in summaries if tag == "sample").image
    assert (image.height, image.width) == (8, 8)
    lr_runs = [path for path in tmp_path.rglob("events.out.tfevents.*") if "lr" in str(path.parent)]
    assert len(lr_runs) == 2  # add_scalars writes one run per tag, as in PyTorch


def test_without_tensorboardx_the_writer_says_what_to_install(monkeypatch):
    monkeypatch.setattr(tensorboard, "tensorboardX", None)
    monkeypatch.setattr(tensorboard, "_IMPORT_ERROR", ModuleNotFoundError(name="tensorboardX"))
    with pytest.raises(ImportError, match=r"not installed: pip install 'genesis-autograd\[tensorboard\]'"):
        tensorboard.SummaryWriter()
    monkeypatch.setattr(tensorboard, "_IMPORT_ERROR", TypeError("protobuf too new"))
    with pytest.raises(ImportError, match=r"failed to import \(TypeError: protobuf too new\)"):
        tensorboard.SummaryWriter()
