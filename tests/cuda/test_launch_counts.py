"""The GPU code paths, run without a GPU by bench/array_ops.py's counting namespace (named
"cupy", so genesis takes its CuPy branches and calls its fused kernels as compiled ones,
whose arguments are checked as CuPy would and computed by their references): every
workload runs, and its kernel launches and host syncs stay within budget.

The budgets are counts, not timings: on a GPU genesis is bound by launches, so a change
that adds some shows up here; raise a budget only with a reason.
"""
import numpy as np

# (launches, host syncs) at most, per workload
BUDGETS = {"MLP step": (24, 1), "CNN step": (43, 1), "block fwd+bwd": (91, 0),
           "BatchNorm2d": (7, 0), "LayerNorm": (7, 0), "GroupNorm": (8, 0), "sigmoid": (4, 0), "tanh": (4, 0),
           "silu": (4, 0), "gelu": (4, 0), "leaky_relu": (4, 0), "sin": (4, 0), "rsqrt": (4, 0),
           "softmax": (5, 0), "log_softmax": (5, 0), "cross_entropy": (6, 1), "mse_loss": (4, 0),
           "bce_with_logits": (4, 0), "layer_norm": (8, 0), "rms_norm": (6, 0),
           "embedding": (6, 1), "conv2d 3x3": (9, 0), "max_pool2d 2x2": (4, 0),
           # 28: linear makes its input one matrix of rows (one matrix product on the GPU,
           # not a batched one), which copies the heads' transposed output explicitly
           "MultiheadAttention": (28, 0),
           # under genesis trace: the figures wait on the device and cross once per backward
           # call (twice in a recorded step: its graph's statistics, then gradient norms);
           # the NaN/Inf watch counts an op's inputs and outputs in one launch, and all the
           # gradient norms are one launch, as is the count of what an optimizer step wrote
           # into all its parameters and their gradients; one more reads the step's loss
           # (kept for genesis diff)
           # a sampled step (steps 0-3, then one in ten) also copies the parameters before the
           # optimizer's update and takes three norms per parameter (update ratios), and the
           # statistics of each module's output; one in a hundred crosses samples of the
           # weights and gradients for their distributions (one more transfer)
           # (a ReLU output's units: which were active, read as a mask; the dead share on the host)
           # and, per weight matrix, the update's and the weights' norms on the rows its
           # gradient reached (a batch moves only the rows of an embedding table it looked
           # up: the update ratio judged is theirs), about 17 launches each
           "MLP step, recorded": (385, 4), "MLP step, sampled": (240, 3), "MLP step, watched": (41, 2)}


def test_training_workloads_run_on_the_gpu_paths_within_their_budgets(array_ops):
    rows = array_ops.genesis_counts(np.random.default_rng(0))
    assert [label for label, *_ in rows] == ["MLP step", "CNN step", "block fwd+bwd",
                                             "BatchNorm2d", "LayerNorm", "GroupNorm",
                                             "MLP step, recorded", "MLP step, sampled",
                                             "MLP step, watched"]
    _within_budgets(rows)


def test_common_layers_run_on_the_gpu_paths_within_their_budgets(array_ops):
    _within_budgets(array_ops.genesis_op_counts())


def _within_budgets(rows) -> None:
    over = {label: f"{launches} launches and {syncs} host syncs, budget {BUDGETS[label]}"
            for label, launches, syncs, _ in rows
            if launches > BUDGETS[label][0] or syncs > BUDGETS[label][1]}
    assert not over, f"over budget (see `python bench/array_ops.py --list`): {over}"
