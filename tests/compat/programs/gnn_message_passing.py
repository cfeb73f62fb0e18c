"""A graph neural network on small random graphs, written without a GNN library as
tutorials do: an edge_index of shape (2, E), messages gathered with index_select,
aggregated with index_add_ (sum), scatter_reduce (mean and amax, include_self=False) and
a normalised adjacency built with index_put_(accumulate=True) for a GCN layer;
graph-level readout by scatter_add_ over a batch vector, BCEWithLogits on graph labels,
and a node-level auxiliary loss with F.one_hot targets."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)
FEATURES, HIDDEN = 4, 16


def random_batch(n_graphs=6):
    xs, edges, batch, labels, offset = [], [], [], [], 0
    for g in range(n_graphs):
        n = int(rng.integers(4, 8))
        src = rng.integers(0, n, size=2 * n)
        dst = rng.integers(0, n, size=2 * n)
        keep = src != dst
        edges.append(np.stack([src[keep], dst[keep]]) + offset)
        x = rng.standard_normal((n, FEATURES)).astype(np.float32)
        xs.append(x)
        batch.append(np.full(n, g))
        labels.append(float(x[:, 0].mean() > 0))
        offset += n
    edge_index = torch.from_numpy(np.concatenate(edges, axis=1))
    edge_index = torch.cat([edge_index, edge_index.flip(0)], dim=1)  # undirected
    return (torch.from_numpy(np.concatenate(xs)), edge_index, torch.from_numpy(np.concatenate(batch)),
            torch.tensor(labels))


def gcn_adjacency(edge_index, num_nodes):
    loops = torch.arange(num_nodes).repeat(2, 1)
    edge_index = torch.cat([edge_index, loops], dim=1)
    values = torch.ones(edge_index.size(1))
    degree = torch.zeros(num_nodes).scatter_add_(0, edge_index[0], values)
    norm = degree.pow(-0.5)
    values = norm[edge_index[0]] * values * norm[edge_index[1]]
    adjacency = torch.zeros(num_nodes, num_nodes)
    return adjacency.index_put_((edge_index[0], edge_index[1]), values, accumulate=True)


class SAGELayer(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.self_lin = nn.Linear(cin, cout)
        self.mean_lin = nn.Linear(cin, cout, bias=False)
        self.max_lin = nn.Linear(cin, cout, bias=False)

    def forward(self, x, edge_index):
        src, dst = edge_index
        messages = x.index_select(0, src)
        summed = torch.zeros_like(x).index_add_(0, dst, messages)
        index = dst.unsqueeze(1).expand_as(messages)
        mean = torch.zeros_like(x).scatter_reduce(0, index, messages, reduce="mean", include_self=False)
        amax = torch.zeros_like(x).scatter_reduce(0, index, messages, reduce="amax", include_self=False)
        return self.self_lin(x) + self.mean_lin(mean) + self.max_lin(amax) + 0.1 * summed.sum(1, keepdim=True)


class GNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.gcn = nn.Linear(FEATURES, HIDDEN)
        self.sage = SAGELayer(HIDDEN, HIDDEN)
        self.node_head = nn.Linear(HIDDEN, 3)
        self.graph_head = nn.Linear(HIDDEN, 1)

    def forward(self, x, edge_index, batch, num_graphs):
        adjacency = gcn_adjacency(edge_index, x.size(0))
        h = F.relu(adjacency @ self.gcn(x))
        h = F.elu(self.sage(h, edge_index))
        pooled = torch.zeros(num_graphs, h.size(1)).scatter_add_(0, batch.unsqueeze(1).expand_as(h), h)
        counts = torch.bincount(batch, minlength=num_graphs).clamp(min=1).unsqueeze(1)
        return self.node_head(h), self.graph_head(pooled / counts).squeeze(1)


model = GNN()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3, weight_decay=5e-4)

for step in range(8):
    x, edge_index, batch, labels = random_batch()
    node_logits, graph_logits = model(x, edge_index, batch, num_graphs=6)
    degree_class = torch.bincount(edge_index[1], minlength=x.size(0)).clamp(max=2)
    node_target = F.one_hot(degree_class, num_classes=3).float()
    node_loss = -(node_target * F.log_softmax(node_logits, dim=-1)).sum(-1).mean()
    graph_loss = F.binary_cross_entropy_with_logits(graph_logits, labels)
    loss = graph_loss + 0.5 * node_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"loss {step} {loss.item():.6f} {graph_loss.item():.6f}")
