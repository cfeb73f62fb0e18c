"""`ModeWatch` on small training loops: training steps run in eval mode after an eval() that
nothing undid are found at the eval() line, naming the modules and the first step; the
look-alikes (validation then train(), BatchNorm frozen on purpose, a teacher, fine-tuning
in eval mode from the start, eval() inside a step undone before it, a linear probe, modules
whose mode changes nothing) give no finding. The watch listens to module calls only for a
few steps after each mode change."""

import genesis
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.autograd import module_scope
from genesis.debug.mode_watch import WINDOW_STEPS, ModeWatch, mode_matters, reads_training
from tests.debug.traced import line_of, traced


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 16)
        self.bn = nn.BatchNorm1d(16)
        self.drop = nn.Dropout(0.5)
        self.head = nn.Linear(16, 1)

    def forward(self, x):
        return self.head(self.drop(F.relu(self.bn(self.fc1(x)))))


class DropPath(nn.Module):
    """Stochastic depth as timm writes it: no genesis class, it reads self.training."""

    def __init__(self, rate):
        super().__init__()
        self.rate = rate

    def forward(self, x):
        if not self.training or self.rate == 0:
            return x
        keep = (genesis.rand(x.shape[0], 1) >= self.rate).float()
        return x * keep / (1 - self.rate)


def step(model, optimizer, x):
    optimizer.zero_grad()
    ((model(x) - 1) ** 2).mean().backward()
    optimizer.step()


def validation(model, x):
    model.eval()
    with genesis.no_grad():
        return model(x).mean().item()


def test_the_classes_whose_forward_reads_training_are_found_without_a_list():
    assert all(reads_training(cls) for cls in (
        nn.Dropout, nn.Dropout2d, nn.AlphaDropout, nn.BatchNorm1d, nn.BatchNorm2d,
        nn.InstanceNorm1d, nn.RReLU, nn.LSTM, nn.MultiheadAttention, DropPath))
    assert not any(reads_training(cls) for cls in (
        nn.Linear, nn.ReLU, nn.LayerNorm, nn.Sequential, nn.Conv2d, nn.Embedding, Net))


def test_modules_that_set_the_mode_aside_do_not_count():
    assert mode_matters(nn.Dropout(0.1)) and mode_matters(nn.BatchNorm1d(3))
    assert not mode_matters(nn.Dropout(0.0))
    assert not mode_matters(nn.BatchNorm1d(3, track_running_stats=False))
    assert not mode_matters(nn.InstanceNorm2d(3))  # tracks no running statistics by default
    assert not mode_matters(nn.LSTM(3, 3, num_layers=2))  # dropout=0
    assert mode_matters(nn.LSTM(3, 3, num_layers=2, dropout=0.2))


def test_train_and_assignments_tell_their_listeners_once_per_change_the_script_makes():
    heard = []

    class Listener:
        def mode_set(self, module, mode):
            heard.append((type(module).__name__, mode, module.training, model.drop.training))

        def mode_assigned(self, module, mode):
            heard.append(("assigned", type(module).__name__, mode, module.training))

    model, listener = Net(), Listener()
    module_scope.mode_listeners.add(listener)
    try:
        model.eval()
        model.head.train()
        model.train(True)
        model.drop.training = False
        model.drop.p = 0.25  # not a mode
    finally:
        module_scope.mode_listeners.discard(listener)
    assert heard == [("Net", False, False, False), ("Linear", True, True, False),
                     ("Net", True, True, True), ("assigned", "Dropout", False, False)]


def test_validation_without_train_is_found_at_the_eval_line():
    genesis.manual_seed(0)
    model, x = Net(), genesis.randn(32, 4)
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.01)

    def run():
        for epoch in range(3):
            for _ in range(3):
                step(model, optimizer, x)
            validation(model, x)

    (finding,) = traced(run)
    assert finding.kind == "left_in_eval_mode" and finding.severity == "warning"
    assert finding.source.endswith(f":{line_of(validation, 'model.eval()')}")
    assert finding.title == "training went on in eval mode after model.eval()"
    assert finding.step == 3 and finding.details["modules"] == ["bn", "drop"]
    assert finding.details["owner"] == "Net" and finding.details["still_in_eval_mode"]
    assert "Call model.train() before training resumes" in finding.message


def test_validation_then_train_each_epoch_is_no_finding():
    genesis.manual_seed(0)
    model, x = Net(), genesis.randn(32, 4)
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.01)

    def run():
        for epoch in range(3):
            model.train()
            for _ in range(3):
                step(model, optimizer, x)
            validation(model, x)

    assert traced(run) == []


def test_only_the_submodule_set_to_eval_is_named_with_its_path():
    genesis.manual_seed(0)
    model = nn.Sequential(Net(), nn.Dropout(0.2), nn.Linear(1, 1))
    x = genesis.randn(32, 4)
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.01)

    def run():
        for index in range(4):
            if index == 2:
                model[0].eval()  # by mistake
            step(model, optimizer, x)

    (finding,) = traced(run)
    assert finding.details["modules"] == ["0.bn", "0.drop"] and finding.details["owner"] == "0"
    assert finding.step == 2 and finding.title.endswith("after model[0].eval()")


def test_a_user_module_that_reads_training_is_found_too():
    genesis.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), DropPath(0.3), nn.Linear(8, 1))
    x = genesis.randn(32, 4)
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.01)

    def run():
        for index in range(4):
            if index == 2:
                model.train(False)
            step(model, optimizer, x)

    (finding,) = traced(run)
    assert finding.details["modules"] == ["1"] and "DropPath" in finding.message
    assert finding.title.endswith("after model.train(False)")


def test_batchnorm_frozen_on_purpose_is_no_finding_from_the_start_or_later():
    genesis.manual_seed(0)
    model, x = Net(), genesis.randn(32, 4)
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.01)

    def run():
        for epoch in range(3):
            model.train()
            model.bn.eval()  # set on the layer itself: on purpose (from the start)
            step(model, optimizer, x)
        for epoch in range(3):
            model.train()
            if epoch >= 1:  # frozen after an epoch, by a freeze_bn() helper
                for module in model.modules():
                    if isinstance(module, nn.BatchNorm1d):
                        module.eval()
            step(model, optimizer, x)

    assert traced(run) == []


def test_a_teacher_trained_then_kept_in_eval_mode_is_no_finding():
    genesis.manual_seed(0)
    teacher, student, x = Net(), Net(), genesis.randn(32, 4)
    teacher_optimizer = genesis.optim.SGD(teacher.parameters(), lr=0.01)
    optimizer = genesis.optim.SGD(student.parameters(), lr=0.01)

    def run():
        for _ in range(3):
            step(teacher, teacher_optimizer, x)
        teacher.eval()
        for _ in range(3):  # the teacher's graph is in the loss; its parameters are not stepped
            optimizer.zero_grad()
            ((student(x) - teacher(x)) ** 2).mean().backward()
            optimizer.step()

    assert traced(run) == []


def test_a_linear_probe_on_features_computed_in_eval_mode_is_no_finding():
    genesis.manual_seed(0)
    model, x = Net(), genesis.randn(32, 4)
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.01)
    probe = genesis.optim.SGD(model.head.parameters(), lr=0.01)

    def run():
        for _ in range(3):
            step(model, optimizer, x)
        model.eval()
        for _ in range(3):
            step(model, probe, x)

    assert traced(run) == []


def test_fine_tuning_in_eval_mode_from_the_start_is_no_finding():
    genesis.manual_seed(0)
    model, x = Net(), genesis.randn(32, 4)
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.01)

    def run():
        model.eval()
        for _ in range(5):
            step(model, optimizer, x)

    assert traced(run) == []


def test_eval_inside_a_step_set_back_before_the_step_is_no_finding():
    """Adversarial inputs crafted in eval mode (a backward call through the model), then
    train() again before the loss."""
    genesis.manual_seed(0)
    model, x = Net(), genesis.randn(32, 4)
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.01)

    def run():
        for _ in range(4):
            model.eval()
            probe = x.clone().requires_grad_(True)
            model(probe).sum().backward()
            model.train()
            adversarial = (x + 0.1 * probe.grad.sign()).detach()
            step(model, optimizer, adversarial)

    assert traced(run) == []


def test_modules_whose_mode_changes_nothing_are_no_finding():
    genesis.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.0), nn.BatchNorm1d(8, track_running_stats=False),
                          nn.LayerNorm(8), nn.Linear(8, 1))
    x = genesis.randn(32, 4)
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.01)

    def run():
        for index in range(4):
            if index == 2:
                model.eval()
            step(model, optimizer, x)

    assert traced(run) == []


def test_the_line_is_the_scripts_call_not_an_overriding_train():
    class KeepsNormFrozen(Net):
        def train(self, mode=True):
            super().train(mode)
            return self

    genesis.manual_seed(0)
    model, x = KeepsNormFrozen(), genesis.randn(32, 4)
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.01)

    def run():
        for index in range(4):
            if index == 2:
                model.eval()  # the line
            step(model, optimizer, x)

    (finding,) = traced(run)
    assert finding.source.endswith(f":{line_of(run, 'model.eval()  # the line')}")


def test_module_calls_are_heard_only_for_a_few_steps_after_each_mode_change():
    genesis.manual_seed(0)
    model, x = Net(), genesis.randn(32, 4)
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.01)
    watch = ModeWatch()
    watch.start()
    try:
        for _ in range(WINDOW_STEPS):
            assert watch in module_scope.listeners
            step(model, optimizer, x)
            watch.stepping(optimizer)
        assert watch not in module_scope.listeners
        model.train()
        assert watch in module_scope.listeners
    finally:
        watch.stop()
    assert watch not in module_scope.listeners and watch not in module_scope.mode_listeners


def test_a_mode_set_by_assignment_is_found_at_the_assignment_line():
    """`training` assigned by hand is heard as a mode change: the train() call before it,
    which put the module in train mode, is not blamed; the assignment is."""
    genesis.manual_seed(0)
    model, x = Net(), genesis.randn(32, 4)
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.01)

    def run():
        for index in range(5):
            if index == 2:
                model.train()
                model.drop.training = False
            step(model, optimizer, x)

    (finding,) = traced(run)
    assert finding.source.endswith(f":{line_of(run, 'model.drop.training = False')}")
    assert finding.title == "training went on in eval mode after model.drop.training = False"
    assert finding.details["modules"] == ["drop"] and finding.details["by_hand"]


def test_batchnorm_frozen_by_hand_and_modes_set_back_by_hand_are_no_finding():
    genesis.manual_seed(0)
    model, x = Net(), genesis.randn(32, 4)
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.01)

    def run():
        for epoch in range(4):
            for module in model.modules():
                module.training = True
            if epoch >= 1:  # statistics frozen by hand after an epoch
                model.bn.training = False
            step(model, optimizer, x)
            for module in model.modules():  # a validation pass
                module.training = False

    assert traced(run) == []
