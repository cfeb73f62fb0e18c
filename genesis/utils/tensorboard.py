"""`SummaryWriter` (PyTorch's `torch.utils.tensorboard.SummaryWriter`): TensorBoard event
files, written by the tensorboardX package (`pip install 'genesis-autograd[tensorboard]'`,
which brings Pillow for images too); genesis tensors are handed to it as NumPy arrays.
Without tensorboardX, making a writer says which package to install."""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor

try:  # an optional dependency: only SummaryWriter needs it
    import tensorboardX
    _IMPORT_ERROR = None
except Exception as error:  # missing, or installed and broken (a protobuf it can't use)
    tensorboardX, _IMPORT_ERROR = None, error

__all__ = ["SummaryWriter", "missing_tensorboardx"]


def missing_tensorboardx(error: BaseException) -> str:
    """Why SummaryWriter can't write: tensorboardX is not installed, or importing it failed.

    >>> "not installed" in missing_tensorboardx(ModuleNotFoundError(name="tensorboardX"))
    True
    >>> "failed to import (TypeError: no protobuf)" in missing_tensorboardx(TypeError("no protobuf"))
    True
    """
    if isinstance(error, ModuleNotFoundError) and error.name == "tensorboardX":
        return ("SummaryWriter writes TensorBoard files with the tensorboardX package, which is "
                "not installed: pip install 'genesis-autograd[tensorboard]' "
                "(or pip install tensorboardX)")
    return (f"SummaryWriter writes TensorBoard files with the tensorboardX package, which is "
            f"installed but failed to import ({type(error).__name__}: {error}); reinstall it "
            f"with the versions it needs: pip install --force-reinstall "
            f"'genesis-autograd[tensorboard]'")


def _plain(value):
    """Tensors as NumPy arrays (0-d ones as numbers), inside lists, tuples and dicts too."""
    if isinstance(value, Tensor):
        array = value.detach().cpu().numpy()
        return array.item() if array.ndim == 0 else array
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_plain(item) for item in value)
    return value


class SummaryWriter:
    """Write scalars, histograms, images, text and hyperparameters for TensorBoard into
    `log_dir` (default: runs/DATE_HOST_COMMENT, as PyTorch).

    >>> import tempfile, genesis
    >>> with tempfile.TemporaryDirectory() as folder:  # doctest: +SKIP
    ...     with SummaryWriter(folder) as writer:
    ...         writer.add_scalar("loss", genesis.tensor(0.5), 0)
    """

    def __init__(self, log_dir: str | None = None, comment: str = "", purge_step: int | None = None,
                 max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = ""):
        if tensorboardX is None:
            raise ImportError(missing_tensorboardx(_IMPORT_ERROR))
        self._writer = tensorboardX.SummaryWriter(logdir=log_dir, comment=comment,
                                                  purge_step=purge_step, max_queue=max_queue,
                                                  flush_secs=flush_secs, filename_suffix=filename_suffix)
        self.log_dir = self._writer.logdir

    def get_logdir(self) -> str:
        """The folder the event files go to."""
        return self.log_dir

    def add_scalar(self, tag: str, scalar_value, global_step: int | None = None,
                   walltime: float | None = None) -> None:
        """One number (a 0-d or one-element tensor, or a Python number) at `global_step`."""
        value = _plain(scalar_value)
        self._writer.add_scalar(tag, float(np.asarray(value).reshape(-1)[0]), global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step: int | None = None,
                    walltime: float | None = None) -> None:
        """Several numbers drawn on one chart."""
        values = {tag: float(np.asarray(_plain(v)).reshape(-1)[0]) for tag, v in tag_scalar_dict.items()}
        self._writer.add_scalars(main_tag, values, global_step, walltime)

    def add_histogram(self, tag: str, values, global_step: int | None = None, bins="tensorflow",
                      walltime: float | None = None, max_bins=None) -> None:
        """The distribution of `values` (a tensor or array)."""
        self._writer.add_histogram(tag, np.asarray(_plain(values)), global_step, bins, walltime,
                                   max_bins)

    def add_image(self, tag: str, img_tensor, global_step: int | None = None,
                  walltime: float | None = None, dataformats: str = "CHW") -> None:
        """One image (CHW by default; floats in [0, 1] or uint8)."""
        self._writer.add_image(tag, _plain(img_tensor), global_step, walltime, dataformats)

    def add_images(self, tag: str, img_tensor, global_step: int | None = None,
                   walltime: float | None = None, dataformats: str = "NCHW") -> None:
        """A batch of images (NCHW by default)."""
        self._writer.add_images(tag, _plain(img_tensor), global_step, walltime, dataformats)

    def add_text(self, tag: str, text_string: str, global_step: int | None = None,
                 walltime: float | None = None) -> None:
        """Text (Markdown) at a step."""
        self._writer.add_text(tag, text_string, global_step, walltime)

    def add_hparams(self, hparam_dict: dict, metric_dict: dict, hparam_domain_discrete=None,
                    run_name: str | None = None, global_step: int | None = None) -> None:
        """Hyperparameters and the metrics they gave, for TensorBoard's HParams tab."""
        self._writer.add_hparams(_plain(hparam_dict), _plain(metric_dict),
                                 hparam_domain_discrete=hparam_domain_discrete, name=run_name,
                                 global_step=global_step)

    def add_figure(self, tag: str, figure, global_step: int | None = None, close: bool = True,
                   walltime: float | None = None) -> None:
        """A matplotlib figure, as an image."""
        self._writer.add_figure(tag, figure, global_step, close, walltime)

    def flush(self) -> None:
        """Write what is queued to disk now."""
        self._writer.flush()

    def close(self) -> None:
        """Flush and close the event files."""
        self._writer.close()

    def __enter__(self) -> "SummaryWriter":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
