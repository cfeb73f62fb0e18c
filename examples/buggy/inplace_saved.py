"""Bug: changing a tensor in place after an op saved it for backward."""
import genesis

genesis.manual_seed(0)
w = genesis.randn(5, requires_grad=True)
gate = w.sigmoid()            # SigmoidBackward saves its output
scores = gate * 3.0
gate.mul_(2)                  # bug: modifies the saved output in place
loss = (scores * gate).sum()
loss.backward()
print("grad", w.grad)
