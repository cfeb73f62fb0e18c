"""Genesis: a PyTorch-style autograd framework on NumPy (CPU) and CuPy (CUDA).

>>> import genesis
>>> x = genesis.tensor([1., 2., 3.], requires_grad=True)
>>> (x ** 2).sum().backward()
>>> x.grad
tensor([2., 4., 6.])
"""
import math as _math
import sys as _sys
import warnings as _warnings

# NumPy warns when arithmetic makes inf or nan (inf * 0, 0 / 0, exp(1000)); PyTorch is silent
# and so is genesis: it reports non-finite values its own way (detect_anomaly, `genesis
# trace`). The filter matches only NumPy's floating-point messages raised on genesis's own
# lines, so warnings in the user's code are untouched.
_warnings.filterwarnings("ignore", r"(invalid value|divide by zero|overflow|underflow) encountered",
                         RuntimeWarning, r"genesis\.")

from . import dtypes
from .device import Device, DeviceError, device, get_default_device, set_default_device
from .dtypes import (DType, bfloat16, bool, double, finfo, float, float16, float32, float64,
                     get_default_dtype, half, iinfo, int, int8, int16, int32, int64, long,
                     set_default_dtype, short, uint8)
from .layouts import (channels_last, channels_last_3d, contiguous_format, layout,
                      legacy_contiguous_format, memory_format, preserve_format, strided)
from .tensor import Tensor
from . import ops as _ops  # binds operators and methods onto Tensor
from . import autograd
from .autograd import (Function, enable_grad, inference_mode, is_grad_enabled,
                       is_inference_mode_enabled, no_grad, set_grad_enabled)
from . import grad_state as _grad_state
from .creation import (arange, as_tensor, asarray, empty, empty_like, eye, from_numpy, full,
                       full_like, linspace, logspace, ones, ones_like, rand, rand_like, randint,
                       randint_like, randn, randn_like, randperm, scalar_tensor, tensor, zeros,
                       zeros_like)
from .rng import (Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed,
                  set_rng_state)
from ._tensor_str import get_printoptions, set_printoptions
from .compile import compile
from .determinism import (are_deterministic_algorithms_enabled, get_deterministic_debug_mode,
                          is_deterministic_algorithms_warn_only_enabled,
                          set_deterministic_debug_mode, use_deterministic_algorithms)
from .sizes import Size
from .threads import get_num_interop_threads, get_num_threads, set_num_interop_threads, set_num_threads
from . import nn, optim
from .serialization import load, save
from . import debug, linalg
from . import cuda

from . import amp, distributions, profiler, special, testing, utils
from . import library
from .amp import GradScaler, autocast
from . import func
from .func import vmap
from . import functional_aliases as _functional_aliases, settings as _settings

globals().update(_ops.public_functions())
for _module in (_settings, _functional_aliases):
    globals().update({name: getattr(_module, name) for name in _module.__all__})

__version__ = "0.1.0"

# The constants PyTorch offers at the top level.
nan, inf, pi, e = _math.nan, _math.inf, _math.pi, _math.e
dtype = DType  # the type of genesis.float32 and the others (torch.dtype)


# The spec's global switch: `genesis.enable_autocast = True` runs eligible ops under autocast
# (float16) everywhere; ops read it through the autocast state, which reads this module.
enable_autocast = False
_grad_state.global_autocast.read_switch_from(_sys.modules[__name__])
