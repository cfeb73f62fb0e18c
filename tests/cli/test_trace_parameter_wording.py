"""The parameter table says what was measured: a parameter whose gradient arrived but was
consumed before the step ended (an optimizer stepped inside a post-accumulate-grad hook) is
reported as reached, not as a measured pass."""
from typer.testing import CliRunner

from genesis_cli.app import app

SCRIPT = '''
import genesis
model = genesis.nn.Linear(3, 2)
optimizers = {p: genesis.optim.SGD([p], lr=0.1) for p in model.parameters()}

def step_now(parameter):
    optimizers[parameter].step()
    optimizers[parameter].zero_grad(set_to_none=True)

for parameter in model.parameters():
    parameter.register_post_accumulate_grad_hook(step_now)
for _ in range(2):
    model(genesis.randn(4, 3)).pow(2).sum().backward()
'''


def test_a_gradient_consumed_in_a_hook_is_reported_as_reached_not_measured(tmp_path):
    script = tmp_path / "optimizer_in_backward.py"
    script.write_text(SCRIPT)
    result = CliRunner().invoke(app, ["trace", "--no-html", "--no-color", "--out",
                                      str(tmp_path / "out"), str(script)])
    said = " ".join(result.output.split())
    assert result.exit_code == 0, result.output
    assert said.count("PASS reached (norm not read") == 2 and "PASS ok" not in said
