"""Functions of a symmetric matrix that read only one of its triangles, as PyTorch programs
use them: an eigen-decomposition of a covariance and a Cholesky factor of a kernel matrix,
trained a few steps. Their gradients are symmetric by definition while a finite-difference
check nudges one element at a time, so `genesis trace --check-all` must compare only the
diagonal and report nothing.
"""
import genesis
import genesis.nn as nn


class SpectralModel(nn.Module):
    def __init__(self, size: int):
        super().__init__()
        self.factor = nn.Parameter(genesis.randn(size, size, dtype=genesis.float64) * 0.3)

    def forward(self, x):
        covariance = self.factor @ self.factor.mT + genesis.eye(x.shape[1], dtype=genesis.float64)
        eigenvalues, eigenvectors = genesis.linalg.eigh(covariance)
        kernel = genesis.linalg.cholesky(covariance + 0.5 * genesis.eye(x.shape[1],
                                                                        dtype=genesis.float64))
        projected = x @ eigenvectors
        return (projected ** 2 * eigenvalues).sum() + kernel.diagonal().log().sum()


genesis.manual_seed(0)
model = SpectralModel(4)
optimizer = genesis.optim.SGD(model.parameters(), lr=0.01)
data = genesis.randn(8, 4, dtype=genesis.float64)
for step in range(3):
    optimizer.zero_grad()
    loss = model(data)
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.4f}")
