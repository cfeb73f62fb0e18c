"""An all-zero parameter that never changes (LoRA's B left out of the optimizer, or in a group
at learning rate 0) starves the parameters whose only gradient path is a product with it:
their "gradient always zero" is told inside its finding (genesis.debug.zero_factors), and
a correct LoRA fine-tune, whose B starts at zeros and trains, has no finding at all."""
import pytest

import genesis
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.debug.session import TraceSession
from tests.helpers import line_of


class LoRALinear(nn.Module):
    """A frozen linear layer with a low-rank adapter: B starts at zeros, as in LoRA."""

    def __init__(self, width, rank=2):
        super().__init__()
        self.base = nn.Linear(width, width).requires_grad_(False)
        self.lora_a = nn.Parameter(genesis.randn(rank, width) * 0.1)
        self.lora_b = nn.Parameter(genesis.zeros(width, rank))

    def forward(self, x):
        return self.base(x) + x @ self.lora_a.t() @ self.lora_b.t()


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.adapted = LoRALinear(8)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(F.relu(self.adapted(x)))


def train(model, optimizer, steps=12):
    genesis.manual_seed(1)
    x, y = genesis.randn(96, 8), genesis.randint(0, 3, (96,))
    with TraceSession(check=False) as session:
        for step in range(steps):
            batch = slice(8 * step, 8 * step + 8)
            optimizer.zero_grad()
            F.cross_entropy(model(x[batch]), y[batch]).backward()
            optimizer.step()
    return session.result(script="t.py").findings


def test_a_correct_lora_fine_tune_has_no_finding():
    genesis.manual_seed(0)
    model = Classifier()
    optimizer = genesis.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    assert train(model, optimizer) == []


def test_b_left_out_of_the_optimizer_starves_a_which_is_told_in_bs_finding():
    genesis.manual_seed(0)
    model = Classifier()
    optimizer = genesis.optim.AdamW(model.head.parameters(), lr=1e-2)  # bug: no adapter
    found = train(model, optimizer)
    assert [finding.kind for finding in found] == ["not_optimized"]
    names = found[0].details["parameters"]
    assert [name.rpartition(".")[2] for name in names] == ["lora_b"]
    starved, = found[0].details["starved"]
    assert starved.endswith("lora_a")
    assert f"{starved}: gradient always zero (the only gradient path to it is multiplied by " \
           f"{names[0]}, all zeros while it never changes)" in found[0].message


def test_b_at_learning_rate_zero_starves_a_too():
    genesis.manual_seed(0)
    model = Classifier()
    adapter = [model.adapted.lora_a, model.adapted.lora_b]
    optimizer = genesis.optim.Adam([{"params": model.head.parameters()},
                                    {"params": adapter, "lr": 0.0}], lr=1e-2)  # bug: lr 0
    found = train(model, optimizer)
    assert [finding.kind for finding in found] == ["not_updated"]
    assert found[0].details["starved"][0].endswith("lora_a")


@pytest.mark.parametrize("around", ["skip connection", "second use"])
def test_a_parameter_with_a_path_around_the_product_keeps_its_own_finding(around):
    """A reaches the loss another way too: its zero gradient is not (only) the product's."""
    class Around(Classifier):
        def forward(self, x):
            low = x @ self.adapted.lora_a.t()
            adapted = self.adapted.base(x) + low @ self.adapted.lora_b.t()
            if around == "skip connection":  # A's output also reaches the loss, times zero
                adapted = adapted + 0.0 * low.sum(-1, keepdim=True)
            else:  # A used a second time, in a product with an all-zero input
                adapted = adapted + (genesis.zeros(x.shape[0], 8) @ self.adapted.lora_a.t()).sum()
            return self.head(F.relu(adapted))

    genesis.manual_seed(0)
    model = Around()
    optimizer = genesis.optim.AdamW(model.head.parameters(), lr=1e-2)
    found = train(model, optimizer)
    assert sorted(finding.kind for finding in found) == ["not_optimized", "zero_gradient"]
    assert "starved" not in next(f for f in found if f.kind == "not_optimized").details



def test_adapters_added_after_the_optimizer_are_found_at_the_line_adding_them():
    """The adapter is put in after the optimizer took the model's parameters: B's finding is
    at the line that made the adapter (not inside its constructor), with A told in it."""
    genesis.manual_seed(0)
    x, y = genesis.randn(96, 8), genesis.randint(0, 3, (96,))
    with TraceSession(check=False) as session:
        model = Classifier()
        model.adapted = model.adapted.base  # a plain model first
        optimizer = genesis.optim.AdamW(model.parameters(), lr=1e-2)
        model.requires_grad_(False)
        adapter = LoRALinear(8)  # the adapters, after the optimizer was built
        adapter.base = model.adapted
        model.adapted = adapter
        for step in range(12):
            batch = slice(8 * step, 8 * step + 8)
            optimizer.zero_grad()
            F.cross_entropy(model(x[batch]), y[batch]).backward()
            optimizer.step()
    found = session.result(script="t.py").findings
    assert sorted(finding.kind for finding in found) == ["not_optimized", "not_updated"]
    missing = next(finding for finding in found if finding.kind == "not_optimized")
    assert missing.source == f"{__file__}:{line_of(__file__, 'adapter = LoRALinear(8)')}"
    assert "after the optimizer was built" in " ".join(missing.message.split())
    assert missing.details["starved"][0].endswith("lora_a")
