"""Clean: knowledge distillation. The teacher's softmax is the *target*: soft labels for
cross_entropy (`F.cross_entropy(student_logits, teacher_probs)`) and the target of kl_div,
the student's logits (or their log_softmax) the input. A frozen teacher's probabilities
are made under no_grad; a peer trained alongside (mutual learning) gives probabilities
that are in the graph, and are still only a target."""
import genesis
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.utils.data import DataLoader, TensorDataset

genesis.manual_seed(0)
TEMPERATURE = 2.0


def classifier(width):
    return nn.Sequential(nn.Linear(6, width), nn.ReLU(), nn.Linear(width, 3))


teacher, student, peer = classifier(32), classifier(8), classifier(8)
inputs = genesis.randn(96, 6)
labels = (inputs[:, 0] > 0).long() + (inputs[:, 1] > 0.5).long()
loader = DataLoader(TensorDataset(inputs, labels), batch_size=32, shuffle=True)
optimizer = genesis.optim.Adam(list(student.parameters()) + list(peer.parameters()), lr=3e-3)
for epoch in range(2):
    for x, y in loader:
        with genesis.no_grad():
            teacher_probs = F.softmax(teacher(x) / TEMPERATURE, dim=1)
        student_logits, peer_logits = student(x), peer(x)
        soft = F.cross_entropy(student_logits / TEMPERATURE, teacher_probs)
        kl = F.kl_div(F.log_softmax(student_logits / TEMPERATURE, dim=1), teacher_probs,
                      reduction="batchmean")
        mutual = F.cross_entropy(student_logits, F.softmax(peer_logits, dim=1))
        loss = soft + kl + mutual + F.cross_entropy(peer_logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
