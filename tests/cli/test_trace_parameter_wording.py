"""The parameter table says what was measured: a parameter whose gradient arrived but was
consumed before the step ended (an optimizer stepped inside a post-accumulate-grad hook),
or a leaf whose gradient autograd.grad took (a gradient penalty's interpolated input), is
reported as reached, not as a measured pass, and the table names both possible causes."""
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


def traced(tmp_path, name: str, source: str) -> str:
    """The report of `genesis trace` on `source` (which must find nothing), on one line."""
    script = tmp_path / name
    script.write_text(source)
    result = CliRunner().invoke(app, ["trace", "--no-html", "--no-color", "--out",
                                      str(tmp_path / "out"), str(script)])
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def test_a_gradient_consumed_in_a_hook_is_reported_as_reached_not_measured(tmp_path):
    said = traced(tmp_path, "optimizer_in_backward.py", SCRIPT)
    assert said.count("PASS reached (no .grad to read: a gradient taken by autograd.grad, or "
                      ".grad cleared before the backward call ended)") == 2
    assert "PASS ok" not in said


PENALTY = '''
import genesis
critic = genesis.nn.Linear(2, 1)
optimizer = genesis.optim.SGD(critic.parameters(), lr=0.01)
for _ in range(2):
    mixed = genesis.randn(8, 2).requires_grad_(True)
    (grad,) = genesis.autograd.grad(critic(mixed).sum(), mixed, create_graph=True)
    loss = critic(genesis.randn(8, 2)).mean() + ((grad.norm(dim=1) - 1) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
'''


def test_a_leaf_whose_gradient_autograd_grad_took_is_not_said_to_have_lost_its_grad(tmp_path):
    said = traced(tmp_path, "penalty.py", PENALTY)
    assert "mixed" in said and "a gradient taken by autograd.grad" in said
