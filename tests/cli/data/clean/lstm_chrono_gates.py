"""Clean: an LSTM with chrono initialisation (forget-gate biases log U(1, T), input-gate
biases their negatives), so most of its gates are open or shut from the first step, by
design, for a long memory; a GRU beside it, gradients clipped every step. Must give no
findings."""
import genesis as torch
import genesis.nn as nn

torch.manual_seed(0)
T, H = 12, 16
MEMORY = 1000  # the longest dependency the gates are set for, in steps


class Recall(nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(4, H, batch_first=True)
        self.head = nn.Linear(H, 1)
        if cell is nn.LSTM:
            with torch.no_grad():
                chrono = torch.log(torch.rand(H) * (MEMORY - 2) + 1)
                self.rnn.bias_hh_l0.zero_()
                self.rnn.bias_ih_l0.zero_()
                self.rnn.bias_ih_l0[H:2 * H] = chrono   # forget gate
                self.rnn.bias_ih_l0[:H] = -chrono       # input gate

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out[:, -1])


x = torch.randn(32, T, 4)
y = x[:, 0, :1]  # remember the first step
for cell in (nn.LSTM, nn.GRU):
    model = Recall(cell)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    for step in range(12):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
    print(cell.__name__, loss.item())
