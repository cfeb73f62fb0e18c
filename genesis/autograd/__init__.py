"""Automatic differentiation: Function, the backward engine, grad modes, gradient checks,
`functional` (jacobian, hessian, vjp, jvp) and anomaly detection.

>>> import genesis
>>> x = genesis.tensor([1., 2.], requires_grad=True)
>>> y = x * 2 + 3
>>> y.grad_fn, y.grad_fn.next_functions
(<AddBackward>, ((<MulBackward>, 0), (None, 0)))
"""
from . import functional, forward_ad, graph
from .anomaly import (AnomalyError, detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled,
                      set_detect_anomaly)
from .engine import backward, grad
from .graph_task import is_multithreading_enabled, set_multithreading_enabled
from .function import (AccumulateGrad, Function, LeafModifiedInPlaceError, Node,
                       SavedTensorModifiedError)
from .custom_function import FunctionCtx, InplaceFunction, once_differentiable
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,
                        no_grad, set_grad_enabled)
from .variable import Variable
from .tracking_modes import (_force_original_view_tracking, _unsafe_preserve_version_counter,
                             is_view_replay_enabled)
from .saved_variables import SavedTensor
from .gradcheck import GradcheckError, GradcheckWarning, check_gradients, gradcheck, gradgradcheck
from .gradcheck_report import GradcheckResult, format_report

__all__ = ["Function", "Node", "AccumulateGrad", "backward", "grad", "no_grad", "enable_grad",
           "inference_mode", "is_inference_mode_enabled", "Variable",
           "set_grad_enabled", "is_grad_enabled", "gradcheck", "gradgradcheck", "check_gradients",
           "GradcheckError", "GradcheckWarning", "GradcheckResult", "format_report", "functional",
           "forward_ad", "graph",
           "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "AnomalyError", "FunctionCtx", "InplaceFunction", "once_differentiable",
           "SavedTensorModifiedError", "LeafModifiedInPlaceError", "SavedTensor",
           "set_multithreading_enabled",
           "is_multithreading_enabled", "is_view_replay_enabled"]
