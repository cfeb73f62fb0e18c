"""A stand-in for `genesis.nn.Module`: a third-party module class that follows the
module-scope protocol (the running call, the hooks around forward) and has PyTorch-like
`named_parameters()` / `named_modules()`."""
from __future__ import annotations

import genesis
from genesis.autograd import module_scope


class Module:
    def __init__(self):
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_parameters", {})

    def __setattr__(self, name, value):
        if isinstance(value, Module):
            self._modules[name] = value
        elif isinstance(value, genesis.Tensor) and value.requires_grad:
            self._parameters[name] = value
        object.__setattr__(self, name, value)

    def named_modules(self, prefix: str = ""):
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop(0)
            yield name, module
            stack[:0] = [(f"{name}.{key}" if name else key, child) for key, child in module._modules.items()]

    def named_parameters(self):
        for name, module in self.named_modules():
            for key, tensor in module._parameters.items():
                yield (f"{name}.{key}" if name else key), tensor

    def __call__(self, *args):
        outer = module_scope.running.call  # the protocol genesis.nn.Module follows
        module_scope.running.call = (self, outer, module_scope.call_order())
        try:
            if module_scope.listeners:
                module_scope.enter(self)
                try:
                    return self.forward(*args)
                finally:
                    module_scope.exit(self)
            return self.forward(*args)
        finally:
            module_scope.running.call = outer


class Linear(Module):
    def __init__(self, fan_in: int, fan_out: int):
        super().__init__()
        self.weight = genesis.randn(fan_in, fan_out, requires_grad=True)
        self.bias = genesis.zeros(fan_out, requires_grad=True)

    def forward(self, x):
        return x @ self.weight + self.bias


class MLP(Module):
    def __init__(self, sizes=(4, 8, 2)):
        super().__init__()
        self.fc1 = Linear(sizes[0], sizes[1])
        self.fc2 = Linear(sizes[1], sizes[2])

    def forward(self, x):
        return self.fc2(self.fc1(x).tanh())


class Sequential(Module):
    def __init__(self, *modules):
        super().__init__()
        for index, module in enumerate(modules):
            setattr(self, str(index), module)

    def forward(self, x):
        for module in self._modules.values():
            x = module(x)
        return x


class Attention(Module):
    def __init__(self, width: int):
        super().__init__()
        self.query = Linear(width, width)
        self.value = Linear(width, width)

    def forward(self, x):
        return (self.query(x).tanh() * self.value(x)) + x


class Block(Module):
    def __init__(self, width: int):
        super().__init__()
        self.attn = Attention(width)
        self.mlp = MLP((width, width, width))

    def forward(self, x):
        return self.mlp(self.attn(x)) + x


class Encoder(Module):
    """encoder.layers.<i>.attn.query ...: four levels of modules."""

    def __init__(self, width: int = 4, depth: int = 3):
        super().__init__()
        self.layers = Sequential(*[Block(width) for _ in range(depth)])

    def forward(self, x):
        return self.layers(x)


class Model(Module):
    def __init__(self, width: int = 4, depth: int = 3):
        super().__init__()
        self.encoder = Encoder(width, depth)
        self.head = Linear(width, 1)

    def forward(self, x):
        return self.head(self.encoder(x)).sum()


class Cell(Module):
    """An RNN cell: tanh(x W + b + h U + c)."""

    def __init__(self, width: int):
        super().__init__()
        self.inp = Linear(width, width)
        self.hid = Linear(width, width)

    def forward(self, x, h):
        return (self.inp(x) + self.hid(h)).tanh()


class Unrolled(Module):
    """One cell called at every step of a sequence, then a head."""

    def __init__(self, width: int = 3):
        super().__init__()
        self.cell = Cell(width)
        self.head = Linear(width, 1)

    def forward(self, xs):
        h = genesis.zeros(xs.shape[1], xs.shape[2])
        for x in xs:
            h = self.cell(x, h)
        return self.head(h).sum()
