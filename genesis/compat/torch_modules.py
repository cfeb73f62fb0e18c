"""Which genesis module serves each torch module under `genesis trace --torch`.

`MODULES` maps a torch module's name to the genesis module whose attributes it offers,
or to None for a torch module that imports fine but offers nothing yet (a script that only
imports it, or uses it behind a flag, runs; one that uses a name from it stops with the
unsupported-name line). A torch module missing here does not import (`genesis compat`
lists it). `RENAMED` holds the torch names genesis spells differently (a name of MODULES:
that served module).
"""
from __future__ import annotations

__all__ = ["MODULES", "RENAMED", "SEMANTICS_VERSION"]

# The PyTorch release whose behaviour genesis's comparison tests check against
# (.ci/run installs it): the torch.__version__ a served script sees, marked as genesis.
SEMANTICS_VERSION = "2.13.0"

MODULES = {
    "torch": "genesis",
    "torch.nn": "genesis.nn",
    "torch.nn.functional": "genesis.nn.functional",
    "torch.nn.init": "genesis.nn.init",
    "torch.nn.parameter": "genesis.nn.parameter",
    "torch.nn.modules": "genesis.nn",
    "torch.nn.modules.module": "genesis.nn.module",
    "torch.nn.modules.activation": "genesis.nn.activation",
    "torch.nn.modules.batchnorm": "genesis.nn.batchnorm",
    "torch.nn.modules.container": "genesis.nn.containers",
    "torch.nn.modules.conv": "genesis.nn.conv",
    "torch.nn.modules.dropout": "genesis.nn.dropout",
    "torch.nn.modules.instancenorm": "genesis.nn.instancenorm",
    "torch.nn.modules.linear": "genesis.nn.linear",
    "torch.nn.modules.lazy": "genesis.nn.lazy",
    "torch.nn.modules.channelshuffle": "genesis.nn.channelshuffle",
    "torch.nn.modules.loss": "genesis.nn.loss",
    "torch.nn.modules.normalization": "genesis.nn.normalization",
    "torch.nn.modules.padding": "genesis.nn.padding",
    "torch.nn.modules.pixelshuffle": "genesis.nn.pixelshuffle",
    "torch.nn.modules.pooling": "genesis.nn.pooling",
    "torch.nn.modules.rnn": "genesis.nn.rnn",
    "torch.nn.modules.sparse": "genesis.nn.embedding",
    "torch.nn.modules.transformer": "genesis.nn.transformer",
    "torch.nn.modules.upsampling": "genesis.nn.upsampling",
    "torch.nn.utils": "genesis.nn.utils",
    "torch.nn.utils.clip_grad": "genesis.nn.utils.clip_grad",
    "torch.nn.utils.rnn": "genesis.nn.utils.rnn",
    "torch.nn.utils.parametrize": "genesis.nn.utils.parametrize",
    "torch.nn.utils.parametrizations": "genesis.nn.utils.parametrizations",
    "torch.nn.utils.prune": "genesis.nn.utils.prune",
    "torch.nn.utils.fusion": "genesis.nn.utils.fusion",
    "torch.nn.utils.stateless": "genesis.compat.torch_nn_utils_stateless",
    "torch.nn.utils.weight_norm": "genesis.nn.utils.weight_norm",
    "torch.nn.utils.spectral_norm": "genesis.nn.utils.spectral_norm",
    "torch.nn.parallel": "genesis.nn.parallel",
    "torch.nn.parallel.distributed": "genesis.nn.distributed_data_parallel",
    "torch.distributed": "genesis.distributed",
    "torch.optim": "genesis.optim",
    "torch.optim.optimizer": "genesis.optim.optimizer",
    "torch.optim.lr_scheduler": "genesis.optim.lr_scheduler",
    "torch.optim.swa_utils": "genesis.optim.swa_utils",
    "torch.autograd": "genesis.autograd",
    "torch.autograd.function": "genesis.autograd.custom_function",
    "torch.autograd.functional": "genesis.autograd.functional",
    "torch.autograd.graph": "genesis.autograd.graph",
    "torch.autograd.gradcheck": "genesis.autograd.gradcheck",
    "torch.autograd._functions": "genesis.compat.torch_autograd_functions",  # the attribute stays the function
    "torch._C": "genesis.compat.torch_C",
    "torch._C._nn": "genesis.compat.torch_C_nn",
    "torch._VF": "genesis.compat.torch_VF",
    "torch.autograd.forward_ad": "genesis.autograd.forward_ad",
    "torch.func": "genesis.func",
    "torch._vmap_internals": "genesis.func.vmap_internals",
    "torch.utils": "genesis.utils",
    "torch.utils.checkpoint": "genesis.utils.checkpoint",
    "torch.utils._python_dispatch": "genesis.utils._python_dispatch",
    "torch.ops": "genesis.compat.torch_ops",
    "torch.library": "genesis.library",
    "torch.utils.data": "genesis.utils.data",
    "torch.utils.data.distributed": "genesis.utils.data.distributed",
    "torch.amp": "genesis.amp",
    "torch.cuda": "genesis.cuda",
    "torch.cuda.amp": "genesis.compat.torch_cuda_amp",
    "torch.linalg": "genesis.linalg",
    "torch.serialization": "genesis.serialization",
    "torch.random": "genesis.rng",
    "torch.testing": "genesis.testing",
    "torch.special": "genesis.special",
    "torch.distributions": "genesis.distributions",
    "torch.distributions.constraints": "genesis.distributions.constraints",
    "torch.distributions.transforms": "genesis.distributions.transforms",
    "torch.distributions.kl": "genesis.distributions.kl",
    "torch.distributions.distribution": "genesis.distributions.distribution",
    "torch.distributions.normal": "genesis.distributions.continuous",
    "torch.distributions.uniform": "genesis.distributions.continuous",
    "torch.distributions.bernoulli": "genesis.distributions.discrete",
    "torch.distributions.categorical": "genesis.distributions.discrete",
    "torch.distributions.independent": "genesis.distributions.independent",
    "torch.distributions.multivariate_normal": "genesis.distributions.multivariate_normal",
    "torch.distributions.transformed_distribution": "genesis.distributions.transformed_distribution",
    "torch.distributions.log_normal": "genesis.distributions.log_normal",
    "torch.distributions.laplace": "genesis.distributions.laplace",
    "torch.distributions.exponential": "genesis.distributions.exponential",
    "torch.distributions.cauchy": "genesis.distributions.cauchy",
    "torch.distributions.gumbel": "genesis.distributions.gumbel",
    "torch.distributions.one_hot_categorical": "genesis.distributions.one_hot_categorical",
    "torch.distributions.relaxed_bernoulli": "genesis.distributions.relaxed",
    "torch.distributions.relaxed_categorical": "genesis.distributions.relaxed",
    "torch.distributions.poisson": "genesis.distributions.poisson",
    "torch.distributions.geometric": "genesis.distributions.geometric",
    "torch.distributions.binomial": "genesis.distributions.binomial",
    "torch.distributions.gamma": "genesis.distributions.gamma",
    "torch.distributions.beta": "genesis.distributions.beta",
    "torch.distributions.dirichlet": "genesis.distributions.dirichlet",
    "torch.distributions.mixture_same_family": "genesis.distributions.mixture_same_family",
    "torch.distributions.utils": "genesis.distributions.utils",
    "torch.accelerator": "genesis.compat.torch_accelerator",
    "torch.backends": "genesis.compat.torch_backends",
    "torch.backends.cudnn": "genesis.compat.torch_backends.cudnn",
    "torch.backends.cuda": "genesis.compat.torch_backends.cuda",
    "torch.backends.mps": "genesis.compat.torch_backends.mps",
    # import fine, offer nothing yet
    "torch.onnx": None,
    "torch.jit": "genesis.compat.torch_jit",
    "torch.utils.tensorboard": "genesis.utils.tensorboard",
}

# torch name -> the genesis name of the same thing, where they differ
RENAMED = {
    "torch.__version__": "genesis.compat.torch_backends.TORCH_VERSION",
    "torch._unique": "genesis.compat.torch_VF._unique",
    "torch._unique2": "genesis.compat.torch_VF._unique2",
    "torch.tensor": "genesis.compat.torch_tensor.tensor",  # PyTorch's dtypes for NumPy data
    "torch.autograd.torch": "torch",  # torch/autograd imports torch; old scripts reach it there
}
