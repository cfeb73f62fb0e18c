"""`genesis gradcheck`: targets (files, file:Name, package.module:Name), inputs, verdicts,
failure reports, --json, --ops sweeps, exit codes and usage errors; plus the target
helpers and the console it prints with."""
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import genesis
from genesis.ops.registry import OpInfo, Sample, all_ops
from genesis_cli import targets
from genesis_cli.app import app
from genesis_cli.commands import gradcheck as command
from tests.helpers import torch_or_skip, usage_error

DATA = Path(__file__).parent / "data"
SIGMOIDS = str(DATA / "sigmoids.py")
HELPERS = str(Path(__file__).resolve().parents[1] / "helpers.py")   # Float32Sin, Float32WrongSign
ANSI = "\x1b["


@pytest.fixture(autouse=True)
def _restore_sys_path(monkeypatch):
    """Loading a target puts its folder on sys.path; keep that inside each test."""
    monkeypatch.setattr(sys, "path", list(sys.path))


def run(*args, env=None):
    """Invoke in-process; COLUMNS fixed so table rows never wrap, whatever the test runner sets."""
    return CliRunner().invoke(app, ["gradcheck", *args], env={"COLUMNS": "200", **(env or {})})


def verdicts(output: str) -> dict:
    """name -> PASS/FAIL/ERROR/SKIP from the table rows."""
    return dict(re.findall(r"^(\S+)\s+(PASS|FAIL|ERROR|SKIP)\b", output, flags=re.MULTILINE))


def write(folder: Path, name: str, source: str) -> str:
    path = folder / name
    path.write_text(textwrap.dedent(source))
    return str(path)


# -- verdicts and reports --------------------------------------------------------

def test_file_checks_every_function_and_explains_the_failure():
    result = run(SIGMOIDS)
    assert result.exit_code == 1
    assert verdicts(result.output) == {"sigmoids.py:GoodSigmoid": "PASS", "sigmoids.py:BadSigmoid": "FAIL"}
    report = result.output.split("FAIL  sigmoids.py:BadSigmoid", 1)[1]
    assert "gradcheck failed: analytical and numerical gradients differ" in report
    assert "worst 10 entries:" in report   # 12 entries fail; the worst 10 are listed
    assert re.search(r"input index\s+output index\s+analytical\s+numerical\s+abs error", report)
    assert "12 of 144 entries out of tolerance" in report
    assert "tolerances: atol=1e-05, rtol=0.001, eps=1e-06" in report
    assert "2 targets: 1 passed, 1 failed. Tolerances: eps=1e-06, atol=1e-05, rtol=0.001" in result.output


def test_the_table_says_what_was_checked_with_default_inputs():
    result = run(f"{SIGMOIDS}:GoodSigmoid")
    assert result.exit_code == 0
    assert verdicts(result.output) == {"sigmoids.py:GoodSigmoid": "PASS"}
    assert "1 x (3, 4) random float64, seed 0 -> (3, 4)" in result.output
    assert "FAIL" not in result.output


def test_json_summary_of_a_failure():
    result = run(f"{SIGMOIDS}:BadSigmoid", "--json", "--max-report", "3")
    assert result.exit_code == 1
    summary = json.loads(result.stdout)
    assert summary["ok"] is False and summary["counts"] == {"PASS": 0, "FAIL": 1, "ERROR": 0, "SKIP": 0}
    assert summary["tolerances"] == {"eps": 1e-6, "atol": 1e-5, "rtol": 1e-3}
    row, = summary["results"]
    assert row["name"] == "sigmoids.py:BadSigmoid" and row["status"] == "FAIL"
    failure, = row["failures"]
    assert failure["failed_check"] == "values" and failure["failing_entries"] == 12
    assert len(failure["worst"]) == 3
    worst = failure["worst"][0]
    assert abs(worst["analytical"] - worst["numerical"]) == pytest.approx(worst["abs_error"])
    assert worst["abs_error"] == pytest.approx(row["max_abs_error"])
    assert "worst 3 entries:" in failure["report"]


def test_tolerances_and_fast_mode_pass_through():
    loose = run(f"{SIGMOIDS}:BadSigmoid", "--atol", "2", "--rtol", "0", "--json")
    assert loose.exit_code == 0 and json.loads(loose.stdout)["tolerances"]["atol"] == 2
    fast = json.loads(run(SIGMOIDS, "--fast", "--json").stdout)
    assert fast["fast"] is True
    assert [row["status"] for row in fast["results"]] == ["PASS", "FAIL"]
    assert fast["results"][1]["failures"][0]["failed_check"] == "values"
    coarse = json.loads(run(f"{SIGMOIDS}:GoodSigmoid", "--eps", "1e-2", "--json").stdout)
    fine = json.loads(run(f"{SIGMOIDS}:GoodSigmoid", "--json").stdout)
    assert coarse["results"][0]["max_abs_error"] > 100 * fine["results"][0]["max_abs_error"]


KINKS = """
    import genesis


    def at_kink():
        return (genesis.tensor([-1.0, 0.0, 2.0, 0.0], dtype=genesis.float64, requires_grad=True),)


    class Relu(genesis.Function):
        gradcheck_inputs = staticmethod(at_kink)

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clamp(min=0)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * (x > 0)


    class WrongRelu(Relu):
        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * (x > 0) * 2
"""


def test_a_right_backward_at_a_kink_is_skipped_as_trace_does_and_a_wrong_one_fails(tmp_path):
    # FAIL "The backward formula disagrees" where `genesis trace` said SKIP "on a kink"
    path = write(tmp_path, "kinks.py", KINKS)
    result = run(path)
    assert result.exit_code == 1
    assert verdicts(result.output) == {"kinks.py:Relu": "SKIP", "kinks.py:WrongRelu": "FAIL"}
    skipped = result.output.split("SKIP  kinks.py:Relu", 1)[1].split("FAIL  kinks.py:WrongRelu")[0]
    assert "not differentiable here" in skipped and "sit on a kink" in skipped
    assert "The backward formula disagrees" not in skipped
    assert re.search(r"^kinks\.py:Relu\s+SKIP\s+-\s+-", result.output, flags=re.MULTILINE)
    assert run(f"{path}:Relu").exit_code == 0


PLANTED = """
    import genesis


    class WrongSign(genesis.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return -grad * x.cos()


    W = genesis.arange(16, dtype=genesis.float64).reshape(4, 4) / 10   # not symmetric


    class MissingTranspose(genesis.Function):
        @staticmethod
        def forward(ctx, x):
            return x @ W

        @staticmethod
        def backward(ctx, grad):
            return grad @ W   # grad @ W.T is right
"""


def test_a_forward_computing_in_float32_is_told_apart_from_a_wrong_backward(tmp_path):
    """float64 in, float32 inside: the finite differences are rounding noise, so the FAIL
    says so instead of blaming the (exact) backward; planted bugs are still blamed on the
    backward, even in such a forward."""
    path = write(tmp_path, "planted.py", PLANTED)
    output = "".join(run(target).output for target in (f"{HELPERS}:Float32Sin",
                                                      f"{HELPERS}:Float32WrongSign", path))
    assert verdicts(output) == {"helpers.py:Float32Sin": "FAIL",
                                "helpers.py:Float32WrongSign": "FAIL",
                                "planted.py:WrongSign": "FAIL",
                                "planted.py:MissingTranspose": "FAIL"}
    reports = dict(re.findall(r"^FAIL  \w+\.py:(\w+)\n(.*?)(?=^FAIL  |^target |\Z)", output,
                              flags=re.MULTILINE | re.DOTALL))
    rounded = " ".join(reports["Float32Sin"].split())
    assert "gradcheck failed: the forward computes at lower precision than its inputs' dtype" in rounded
    assert "every value of output 0 is exactly a float32 value, while input 0 is float64" in rounded
    assert "the comparison is not meaningful" in rounded
    assert "The backward formula" not in rounded and "kink" not in rounded
    assert "surrogate_gradient" not in rounded
    for planted in ("Float32WrongSign", "WrongSign", "MissingTranspose"):
        said = " ".join(reports[planted].split())
        assert "gradcheck failed: analytical and numerical gradients differ" in said, planted
        assert "The backward formula disagrees with central finite differences" in said
        assert "lower precision" not in said


def test_seed_changes_the_random_inputs():
    first = json.loads(run(f"{SIGMOIDS}:GoodSigmoid", "--json", "--seed", "1").stdout)["results"][0]
    second = json.loads(run(f"{SIGMOIDS}:GoodSigmoid", "--json", "--seed", "2").stdout)["results"][0]
    assert "seed 1" in first["checked"] and "seed 2" in second["checked"]
    assert first["max_abs_error"] != second["max_abs_error"]


# -- inputs ----------------------------------------------------------------------

def test_gradcheck_inputs_with_a_constant_argument():
    result = run(str(DATA / "with_inputs.py"))
    assert result.exit_code == 0
    assert verdicts(result.output) == {"with_inputs.py:ScaledSquare": "PASS"}
    assert "gradcheck_inputs(): (1, 3) float64, 3.0 -> (1, 3)" in result.output
    overridden = run(str(DATA / "with_inputs.py"), "--shape", "2,3")   # --shape wins
    assert "takes 2 inputs but 1 --shape was given" in overridden.output


def test_wrong_default_shapes_are_an_error_that_suggests_shape():
    result = run(str(DATA / "shaped.py"))
    assert result.exit_code == 1
    assert verdicts(result.output) == {"shaped.py:MatMul": "ERROR"}
    assert "ValueError: matmul" in result.output
    assert re.search(r"raised at .*shaped\.py:\d+ in forward", result.output)
    assert "pass --shape once per input" in result.output


def test_shapes_one_per_input():
    result = run(str(DATA / "shaped.py"), "--shape", "3,4", "--shape", "4x5")
    assert result.exit_code == 0
    assert "(3, 4), (4, 5) random float64, seed 0 -> (3, 5)" in result.output


def test_a_shape_count_that_does_not_fit_the_forward():
    result = run(str(DATA / "shaped.py"), "--shape", "3,4")
    assert result.exit_code == 1
    assert verdicts(result.output) == {"shaped.py:MatMul": "ERROR"}
    assert "shaped.py:MatMul takes 2 inputs but 1 --shape was given" in result.output


def test_a_forward_without_ctx_gets_all_its_inputs():
    # its first input was taken for ctx: one input too few (missing 'b', or "takes 0 inputs")
    path = f"{DATA / 'setup_context.py'}:Mul"
    result = run(path)
    assert result.exit_code == 0, result.output
    assert "2 x (3, 4) random float64, seed 0 -> (3, 4)" in result.output
    assert run(path, "--shape", "2", "--shape", "2").exit_code == 0
    assert "takes 2 inputs but 1 --shape was given" in run(path, "--shape", "2").output
    assert targets.input_count(targets.resolve(path)[0]) == (2, 2)


def test_a_pytorch_forward_without_ctx_gets_all_its_inputs(tmp_path):
    source = (DATA / "setup_context.py").read_text().replace("genesis", "torch")
    path = write(tmp_path, "torch_styles.py", source.split("\n\n\ndef product")[0])
    checked = subprocess.run([sys.executable, "-m", "genesis_cli", "gradcheck", "--torch", path],
                             capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert verdicts(checked.stdout) == {"torch_styles.py:Mul": "PASS"}


NUMBER_INPUTS = """
    import genesis


    class Power(genesis.Function):
        @staticmethod
        def forward(ctx, x, n: int, scale: float, twice: bool, offset=1.0):
            ctx.save_for_backward(x)
            ctx.n, ctx.scale = n, scale * (2 if twice else 1)
            out = x
            for _ in range(n - 1):
                out = out * x
            return out * ctx.scale + offset

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * ctx.scale * ctx.n * x ** (ctx.n - 1), None, None, None, None


    def shifted(x, shift: "int", y):
        return (x + shift) * y


    def labelled(x, label: str):
        return x * 2
"""


def test_inputs_annotated_int_float_or_bool_get_numbers_not_tensors(tmp_path):
    # a random float tensor went to `n: int`: range(n) raised, or the check failed
    path = write(tmp_path, "numbers.py", NUMBER_INPUTS)
    power = run(f"{path}:Power")
    assert power.exit_code == 0, power.output
    assert verdicts(power.output) == {"numbers.py:Power": "PASS"}
    assert ("1 x (3, 4) random float64, seed 0; n=2 (made up for `n: int`); scale=0.5 (made up "
            "for `scale: float`); twice=False (made up for `twice: bool`)") in " ".join(power.output.split())
    assert "takes 1 to 2 tensor inputs but 3 --shape were given" in run(
        f"{path}:Power", "--shape", "2", "--shape", "2", "--shape", "2").output
    shifted = run(f"{path}:shifted", "--shape", "3", "--shape", "3")   # the names, as strings
    assert shifted.exit_code == 0 and "shift=2 (made up for `shift: int`)" in shifted.output
    labelled = run(f"{path}:labelled")
    assert verdicts(labelled.output) == {"numbers.py:labelled": "ERROR"}
    assert ("can't make up a value for its argument 'label' (annotated str): give labelled a "
            "gradcheck_inputs() that returns its inputs") in " ".join(labelled.output.split())


def test_a_type_error_on_random_inputs_says_how_to_give_other_inputs(tmp_path):
    path = write(tmp_path, "counted.py", """
        def repeated(x, n):
            return sum(x for _ in range(n))
    """)
    result = run(path + ":repeated")
    assert verdicts(result.output) == {"counted.py:repeated": "ERROR"}
    assert ("If an input of counted.py:repeated is not a tensor, annotate it (one annotated int, "
            "float or bool gets a made-up value) or give it a gradcheck_inputs()") in " ".join(result.output.split())


def test_a_float32_constant_inside_forward_is_named_as_the_dtype_clash(tmp_path):
    """matmul refuses mixed dtypes, as PyTorch's: the float64 check of a Function that makes
    a float32 tensor inside says how to fix that, not to pass other --shape values."""
    path = write(tmp_path, "projected.py", """
        import genesis

        def projected(x):
            return x @ genesis.ones(4, 2)
    """)
    result = run(path + ":projected", "--shape", "3,4")
    text = " ".join(result.output.split())
    assert verdicts(result.output) == {"projected.py:projected": "ERROR"}
    assert "make them in its input's dtype (dtype=x.dtype): gradients are checked in " \
           "float64" in text and "--shape once per input" not in text


def test_dtype_warning_is_printed_once():
    result = run(f"{SIGMOIDS}:GoodSigmoid", "--dtype", "float32")
    assert result.exit_code == 0
    assert result.output.count("warning:") == 1 and "--dtype float32" in result.output
    assert "requires grad but is not float64" not in result.output   # gradcheck's own, not repeated
    assert "random float32" in result.output


def test_bfloat16_fails_a_wrong_backward_and_passes_a_right_one(tmp_path):
    # bfloat16 outputs were left out of the check (NumPy's dtype kind "V"): all passed, error 0
    path = write(tmp_path, "low.py", """
        import genesis

        class WrongCube(genesis.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x * x

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return 2 * x * x * grad   # the derivative is 3 x^2

        class WrongMul(genesis.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                return a * b

            @staticmethod
            def backward(ctx, grad):
                a, b = ctx.saved_tensors
                return grad * b, grad * b   # b's gradient is grad * a

        def sine(x):
            return x.sin()

        def product(a, b):
            return a * b
    """)
    wrong = run(path, "--dtype", "bfloat16")
    assert verdicts(wrong.output) == {"low.py:WrongCube": "FAIL", "low.py:WrongMul": "FAIL"}
    for name in ("sine", "product"):
        right = run(f"{path}:{name}", "--dtype", "bfloat16", "--json")
        assert right.exit_code == 0, right.output
        summary = json.loads(right.stdout)
        assert summary["tolerances"] == {"eps": 1e-6, "atol": 1e-5, "rtol": 1.6e-2}
        assert 0 < summary["results"][0]["max_abs_error"] < 1e-2
    assert command.default_tolerances(genesis.float16) == (1e-5, 1e-3)   # float16: unchanged
    stated = run(f"{path}:sine", "--dtype", "bfloat16", "--rtol", "1e-3", "--json")
    assert json.loads(stated.stdout)["tolerances"]["rtol"] == 1e-3


def test_gradcheck_warning_shown_when_the_provided_inputs_are_float32(tmp_path):
    path = write(tmp_path, "half.py", """
        import genesis

        def double(x):
            return x * 2

        double.gradcheck_inputs = lambda: genesis.tensor([1.0, 2.0], requires_grad=True)
    """)
    result = run(f"{path}:double")
    assert result.exit_code == 0
    assert result.output.count("requires grad but is not float64") == 1


# -- plain callables and modules ---------------------------------------------------

def test_plain_callables():
    plain = str(DATA / "plain.py")
    assert verdicts(run(f"{plain}:softplus").output) == {"plain.py:softplus": "PASS"}
    wrong = run(f"{plain}:wrong_square")
    assert wrong.exit_code == 1 and verdicts(wrong.output) == {"plain.py:wrong_square": "FAIL"}
    bad = run(f"{plain}:not_a_tensor")
    assert bad.exit_code == 1 and verdicts(bad.output) == {"plain.py:not_a_tensor": "ERROR"}
    assert "TypeError: gradcheck: the function must return a Tensor" in bad.output
    assert "--shape" not in bad.output   # not a shape problem


def test_package_module_target(tmp_path, monkeypatch):
    package = tmp_path / "gradcheck_fixture_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    write(package, "layers.py", """
        import genesis

        class Cube(genesis.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x._data ** 3

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return grad * 3 * x * x

        def swish(x):
            return x * x.sigmoid()
    """)
    monkeypatch.chdir(tmp_path)
    try:
        cube = run("gradcheck_fixture_pkg.layers:Cube", "--shape", "5")
        assert cube.exit_code == 0
        assert verdicts(cube.output) == {"gradcheck_fixture_pkg.layers:Cube": "PASS"}
        assert "(5,) random float64" in cube.output
        swish = run("gradcheck_fixture_pkg.layers:swish")
        assert verdicts(swish.output) == {"gradcheck_fixture_pkg.layers:swish": "PASS"}
    finally:
        for name in ("gradcheck_fixture_pkg", "gradcheck_fixture_pkg.layers"):
            sys.modules.pop(name, None)


# -- usage errors (exit 2, one line) -------------------------------------------------

def test_usage_errors(tmp_path):
    assert "file not found:" in usage_error(run(str(tmp_path / "missing.py")))
    assert "defines no genesis.autograd.Function subclass" in usage_error(run(str(DATA / "no_functions.py")))
    assert "no 'nope' there; it defines softplus, wrong_square, not_a_tensor" in usage_error(
        run(f"{DATA / 'plain.py'}:nope"))
    assert "is 7 (int), not a Function subclass or a callable" in usage_error(run(f"{DATA / 'plain.py'}:LIMIT"))
    assert "can't import module 'no_such_package_xyz.mod'" in usage_error(run("no_such_package_xyz.mod:f"))
    assert "is not a target" in usage_error(run("just_a_name"))
    assert "bad --shape '3,a'" in usage_error(run(SIGMOIDS, "--shape", "3,a"))
    assert "bad --shape '-2'" in usage_error(run(SIGMOIDS, "--shape", "-2"))
    assert "bad --dtype 'int64'" in usage_error(run(SIGMOIDS, "--dtype", "int64"))
    assert "nothing to check" in usage_error(run())
    assert "--filter selects ops" in usage_error(run(SIGMOIDS, "--filter", "log"))
    broken = write(tmp_path, "broken.py", "def f(x:\n")
    assert "importing" in usage_error(run(broken)) and "SyntaxError" in usage_error(run(broken))


@pytest.mark.parametrize("option, value, allowed", [
    ("--eps", "0", "> 0"), ("--eps", "nan", "> 0"), ("--eps", "-1e-6", "> 0"), ("--eps", "inf", "> 0"),
    ("--atol", "-1", ">= 0"), ("--atol", "nan", ">= 0"), ("--rtol", "-0.1", ">= 0"),
    ("--rtol", "inf", ">= 0")])
def test_tolerances_outside_their_range_are_usage_errors(option, value, allowed):
    # they were taken, and a right Function FAILed with NaN errors
    result = run(f"{SIGMOIDS}:GoodSigmoid", option, value)
    assert result.exit_code == 2 and "Traceback" not in result.output
    said = " ".join(re.sub("[│╭╮╰╯─]", " ", result.output).split())
    assert f"Invalid value for '{option}': must be a finite number {allowed}" in said


# -- --ops ---------------------------------------------------------------------------

def test_ops_sweep_by_name():
    result = run("--ops", "mul,div,eq")
    assert result.exit_code == 0
    assert verdicts(result.output) == {"mul": "PASS", "div": "PASS", "eq": "SKIP"}
    assert "not differentiable" in result.output
    assert "3 ops: 2 passed, 1 skipped." in result.output


def test_ops_filter():
    result = run("--ops", "--filter", "log1p")
    assert result.exit_code == 0 and verdicts(result.output) == {"log1p": "PASS"}
    assert verdicts(run("--filter", "log1p").output) == {"log1p": "PASS"}   # --filter implies --ops


def test_ops_usage_errors():
    assert "no op named 'mull' in the registry; did you mean mul" in usage_error(run("--ops", "mull"))
    assert "no op name contains 'zzz'" in usage_error(run("--ops", "--filter", "zzz"))
    assert "--shape is for targets" in usage_error(run("--ops", "mul", "--shape", "3"))


def test_ops_sweep_as_json():
    """A sweep's JSON: every selected op in registry order, the non-differentiable ones
    skipped. (Every op's gradient is checked against finite differences by
    tests/ops/test_registry.py; a sweep of all 351 here would take a minute again.)"""
    result = run("--ops", "--filter", "log", "--json")
    assert result.exit_code == 0
    summary = json.loads(result.stdout)
    assert summary["ok"] and summary["mode"] == "ops"
    selected = [info for info in all_ops() if "log" in info.name]
    assert [row["name"] for row in summary["results"]] == [info.name for info in selected]
    skipped = {row["name"] for row in summary["results"] if row["status"] == "SKIP"}
    assert skipped == {info.name for info in selected if not info.differentiable}
    assert skipped and len(skipped) < len(selected)  # both kinds are in the selection


class _WrongExp(genesis.Function):
    @staticmethod
    def forward(ctx, x):
        return x._device.xp.exp(x._data)

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


def _raises(x):
    raise RuntimeError("boom")


def test_op_rows_aggregate_their_samples(monkeypatch):
    def samples(rng):
        return [Sample((rng.standard_normal((2, 3)),), note="2-D"),
                Sample((rng.standard_normal(4),), note="1-D"),
                Sample((rng.standard_normal(4),), grad=(False,), note="no grad")]

    registry = [OpInfo("wrong_exp", _WrongExp.apply, samples), OpInfo("raises", _raises, samples)]
    monkeypatch.setattr(command, "all_ops", lambda: registry)
    result = run("--ops")
    assert result.exit_code == 1
    assert verdicts(result.output) == {"wrong_exp": "FAIL", "raises": "ERROR"}
    assert "2 samples, float64 (1 more with no input requiring grad)" in result.output
    assert "FAIL  wrong_exp, sample 0 (2-D)" in result.output
    assert "also failing: sample 1 (1-D)" in result.output
    assert "ERROR  raises, sample 0 (2-D)" in result.output and "RuntimeError: boom" in result.output
    summary = json.loads(run("--ops", "--json").stdout)
    assert [len(row["failures"]) for row in summary["results"]] == [2, 0]
    assert [len(row["errors"]) for row in summary["results"]] == [0, 2]


# -- the console ---------------------------------------------------------------------

@pytest.mark.parametrize("env, flags, coloured", [
    ({"FORCE_COLOR": "1"}, [], True),
    ({"FORCE_COLOR": "1"}, ["--no-color"], False),
    ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, [], False),
    ({}, [], False),                       # not a terminal
])
def test_colour_follows_no_color_and_the_terminal(env, flags, coloured):
    env = {"NO_COLOR": "", "FORCE_COLOR": None, **env}
    result = run(f"{SIGMOIDS}:GoodSigmoid", *flags, env=env)
    assert result.exit_code == 0 and (ANSI in result.output) == coloured


def test_progress_bar_only_on_a_terminal():
    import io

    from rich.console import Console

    from genesis_cli.ui import progress

    for terminal in (True, False):
        stream = io.StringIO()
        console = Console(file=stream, force_terminal=terminal, width=80)
        with progress(console, "checking", total=2) as advance:
            advance("a")
            advance("b")
        assert bool(stream.getvalue()) == terminal


# -- targets helpers -------------------------------------------------------------------

def test_parse_shape():
    assert targets.parse_shape("3,4") == (3, 4)
    assert targets.parse_shape(" (2, 3, 4) ") == (2, 3, 4)
    assert targets.parse_shape("5") == (5,)
    assert targets.parse_shape("0,3") == (0, 3)
    assert targets.parse_shape("scalar") == targets.parse_shape("") == ()
    with pytest.raises(targets.TargetError, match="bad --shape"):
        targets.parse_shape("three")


def test_input_count_reads_the_forward():
    def with_defaults(a, b, scale=2.0):
        return a * b * scale

    def variadic(*tensors):
        return tensors[0]

    assert targets.input_count(targets.Target("f", with_defaults, with_defaults)) == (2, 3)
    assert targets.input_count(targets.Target("g", variadic, variadic)) == (0, None)
    mul, = targets.resolve("genesis.ops.elementwise:Mul")
    assert mul.is_function_class and targets.input_count(mul) == (2, 2)


def test_build_inputs_default_and_explicit():
    softplus, = targets.resolve(f"{DATA / 'plain.py'}:softplus")
    default = targets.build_inputs(softplus, [], genesis.float64, seed=0)
    assert default.defaulted and default.description == "1 x (3, 4) random float64, seed 0"
    x, = default.args
    assert x.requires_grad and x.dtype == genesis.float64
    np.testing.assert_array_equal(x.detach().numpy(), np.random.default_rng(0).standard_normal((3, 4)))
    explicit = targets.build_inputs(softplus, [(2,)], genesis.float32, seed=1)
    assert not explicit.defaulted and explicit.args[0].shape == (2,)
    assert explicit.args[0].dtype == genesis.float32


# -- a real process ---------------------------------------------------------------------

def test_runs_as_a_module_in_a_subprocess():
    environment = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    completed = subprocess.run([sys.executable, "-m", "genesis_cli", "gradcheck", SIGMOIDS],
                               capture_output=True, text=True, env=environment, check=False)
    assert completed.returncode == 1, completed.stderr
    assert verdicts(completed.stdout) == {"sigmoids.py:GoodSigmoid": "PASS", "sigmoids.py:BadSigmoid": "FAIL"}
    assert "worst 10 entries:" in completed.stdout and ANSI not in completed.stdout
    missing = subprocess.run([sys.executable, "-m", "genesis_cli", "gradcheck", "missing_file.py"],
                             capture_output=True, text=True, check=False)
    assert missing.returncode == 2 and missing.stderr.startswith("error: file not found")
    assert "Traceback" not in missing.stderr


# -- importing a script: its own argument parsing, an exit at import, NaN inputs -------

SQUARE = """
    class Square(genesis.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 2 * x
"""


def test_a_script_parsing_its_arguments_at_import_sees_only_its_own_path(tmp_path):
    script = write(tmp_path, "train.py", textwrap.dedent("""
        import argparse
        import sys
        import genesis

        parser = argparse.ArgumentParser()
        parser.add_argument("--steps", type=int, default=10)
        options = parser.parse_args()     # at import, as many training scripts do
        ARGV = list(sys.argv)
    """) + textwrap.dedent(SQUARE))
    before = list(sys.argv)
    result = run(script, "--shape", "3", "--fast", "--seed", "1")
    assert result.exit_code == 0, result.output
    assert verdicts(result.output) == {"train.py:Square": "PASS"}
    assert sys.modules[next(name for name in sys.modules if name.startswith("_genesis_target_")
                            and getattr(sys.modules[name], "__file__", "") == script)].ARGV == [script]
    assert sys.argv == before


def test_an_exit_while_importing_names_the_line_and_the_guard(tmp_path):
    script = write(tmp_path, "needs_data.py", textwrap.dedent("""
        import argparse
        import genesis

        parser = argparse.ArgumentParser()
        parser.add_argument("--data", required=True)
        options = parser.parse_args()
    """) + textwrap.dedent(SQUARE))
    line = usage_error(run(script))
    assert f"importing {script} exited at {script}:7 (options = parser.parse_args()) with status 2" in line
    assert "the following arguments are required: --data" in line      # argparse's own last word
    assert 'put its own script code under `if __name__ == "__main__":`' in line
    exits = write(tmp_path, "exits.py", "import sys\nsys.exit('no data here')\n")
    assert f"exited at {exits}:2 (sys.exit('no data here')) with status 'no data here'" in usage_error(
        run(exits))


def test_a_module_target_exiting_at_import_is_named_too(tmp_path, monkeypatch):
    write(tmp_path, "exiting_module_xyz.py", "raise SystemExit(3)\n")
    monkeypatch.chdir(tmp_path)
    try:
        line = usage_error(run("exiting_module_xyz:f"))
    finally:
        sys.modules.pop("exiting_module_xyz", None)
    assert "importing exiting_module_xyz exited at" in line and "with status 3" in line


def test_inputs_holding_nan_are_named_in_the_report(tmp_path):
    script = write(tmp_path, "nan_inputs.py", """
        import genesis


        class Square(genesis.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return grad * 2 * x

            @staticmethod
            def gradcheck_inputs():
                return genesis.tensor([1.0, float("nan"), 2.0], dtype=genesis.float64,
                                      requires_grad=True)
    """)
    result = run(script)
    assert result.exit_code == 1
    assert verdicts(result.output) == {"nan_inputs.py:Square": "FAIL"}
    # no gradient was compared, so no error was measured: the table says "-", not 0
    assert re.search(r"^nan_inputs\.py:Square\s+FAIL\s+-\s+-\s", result.output, flags=re.MULTILINE)
    assert "gradcheck failed: an input holds NaN or Inf" in result.output
    assert "input 0 (shape (3,)) holds 1 NaN at (1,): gradcheck needs finite inputs" in result.output
    assert "reentrant" not in result.output


def test_a_function_with_random_numbers_inside_is_reported_as_nondeterministic(tmp_path):
    script = write(tmp_path, "noisy.py", """
        import genesis


        class Jitter(genesis.Function):
            @staticmethod
            def forward(ctx, x):
                return x + genesis.randn(*x.shape, dtype=x.dtype) * 0.01

            @staticmethod
            def backward(ctx, grad):
                return grad
    """)
    result = run(script, "--json")
    assert result.exit_code == 1
    (failure,) = json.loads(result.output)["results"][0]["failures"]
    assert failure["failed_check"] == "nondeterministic"
    assert failure["title"] == "the function is nondeterministic"


TORCH_FUNCTIONS = """
    import torch


    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x ** 2
"""


def test_a_pytorch_file_is_checked_with_torch_and_named_as_pytorchs_without_it(tmp_path):
    script = write(tmp_path, "torch_ops.py", textwrap.dedent(TORCH_FUNCTIONS))
    checked = subprocess.run([sys.executable, "-m", "genesis_cli", "gradcheck", "--torch", str(script)],
                             capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert verdicts(checked.stdout) == {"torch_ops.py:Cube": "PASS"}
    torch_or_skip()  # without --torch the file imports the real PyTorch
    refused = subprocess.run([sys.executable, "-m", "genesis_cli", "gradcheck", str(script)],
                             capture_output=True, text=True, check=False)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "defines PyTorch Functions (Cube), not genesis ones" in " ".join(refused.stderr.split())
    assert "genesis gradcheck --torch" in refused.stderr


IN_PLACE = """
    import genesis


    class Double_(genesis.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * FACTOR


    def square_in_place(x):
        x.mul_(3)
        return x * x
"""


def in_place_functions(tmp_path, factor: int, module: str = "genesis") -> str:
    source = textwrap.dedent(IN_PLACE).replace("FACTOR", str(factor)).replace("genesis", module)
    return write(tmp_path, f"in_place_{module}_{factor}.py", source)


def test_a_function_that_changes_its_input_in_place_is_checked_on_clones(tmp_path):
    # A leaf that requires grad can't be changed in place: PyTorch users check such a Function
    # as F.apply(x.clone()), and so does the command, saying so.
    result = run(in_place_functions(tmp_path, 2))
    assert result.exit_code == 0, result.output
    assert verdicts(result.output) == {"in_place_genesis_2.py:Double_": "PASS"}
    assert "passed as clones (it changes its inputs in place)" in " ".join(result.output.split())
    plain = run(f"{in_place_functions(tmp_path, 2)}:square_in_place")
    assert verdicts(plain.output) == {"in_place_genesis_2.py:square_in_place": "PASS"}, plain.output
    wrong = run(in_place_functions(tmp_path, 3))
    assert verdicts(wrong.output) == {"in_place_genesis_3.py:Double_": "FAIL"}
    assert "analytical and numerical gradients differ" in wrong.output
    torch = torch_or_skip()
    double_ = targets.resolve(f"{in_place_functions(tmp_path, 2, 'torch')}:Double_")[0].obj
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: double_.apply(x.clone()), (x,))


def test_an_error_of_the_backward_or_the_outputs_gives_no_hint_about_inputs(tmp_path):
    # The engine's refusal of backward's gradients and gradcheck's refusal of a float output
    # came with "If ... needs other shapes, pass --shape" or "annotate the input": no other
    # inputs would help. PyTorch's gradcheck refuses the same Functions.
    path = write(tmp_path, "refused.py", """
        import genesis


        class OneGradientShort(genesis.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x * y

            @staticmethod
            def backward(ctx, grad):
                return grad


        class FloatOutput(genesis.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, 3.0

            @staticmethod
            def backward(ctx, grad, unused):
                return grad * 2
    """)
    result = run(path)
    text = " ".join(result.output.split())
    assert verdicts(result.output) == {"refused.py:OneGradientShort": "ERROR",
                                       "refused.py:FloatOutput": "ERROR"}
    assert "backward returned 1 gradient(s) but forward took 2 argument(s)" in text
    assert "but output 1 is a float" in text
    assert "The inputs were" not in text and "--shape once per input" not in text


SURROGATES = """
    import genesis


    class ReverseGradient(genesis.Function):
        surrogate_gradient = DECLARED

        @staticmethod
        def forward(ctx, x):
            return 2 * x  # (not the identity: that alone says a reversal layer is meant)

        @staticmethod
        def backward(ctx, grad):
            return -grad
"""


def test_a_declared_surrogate_gradient_is_skipped_and_a_failing_function_is_told_of_it(tmp_path):
    # `genesis trace` skips a Function declaring surrogate_gradient = True, as the README says
    # "the checks" do; `genesis gradcheck` failed it all the same.
    declared = write(tmp_path, "declared.py", SURROGATES.replace("DECLARED", "True"))
    result = run(declared)
    assert result.exit_code == 0, result.output
    assert verdicts(result.output) == {"declared.py:ReverseGradient": "SKIP"}
    assert "not checked: ReverseGradient declares a surrogate gradient (surrogate_gradient = " \
           "True)" in " ".join(result.output.split())
    undeclared = run(write(tmp_path, "undeclared.py", SURROGATES.replace("DECLARED", "False")))
    assert verdicts(undeclared.output) == {"undeclared.py:ReverseGradient": "FAIL"}
    assert "set surrogate_gradient = True on ReverseGradient: the checks then skip it" in \
        " ".join(undeclared.output.split())
    assert "surrogate_gradient" not in run(f"{SIGMOIDS}:GoodSigmoid").output
