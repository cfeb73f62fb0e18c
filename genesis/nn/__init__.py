"""Neural-network building blocks: `Module`, `Parameter`, containers, layers, `init`,
`utils` and `functional` (imported as `F`). Importing it registers the functional ops'
families in the op registry (`genesis.ops.registry`).

>>> import genesis
>>> from genesis import nn
>>> model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
>>> model(genesis.ones(2, 3)).shape
genesis.Size([2, 1])
"""
from . import registered_ops  # puts nn's Functions in the op registry
from . import functional, init, parallel, utils
from .activation import (CELU, ELU, GELU, SELU, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU,
                         LogSoftmax, Mish, PReLU, ReLU, ReLU6, Sigmoid, SiLU, Softmax, Softmax2d, Softmin,
                         Softplus, Tanh)
from .attention import MultiheadAttention
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .composite_layers import (GLU, CosineSimilarity, Dropout1d, Dropout2d, Dropout3d, Hardshrink,
                               LogSigmoid, PairwiseDistance, Softshrink, Softsign, Tanhshrink, Threshold)
from .containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .dropout import Dropout
from .embedding import Embedding
from .flatten import Flatten, Unflatten
from .fold import Fold, Unfold
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .linear import Bilinear, Identity, Linear
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss,
                   MSELoss, NLLLoss, SmoothL1Loss)
from .margin_loss_modules import (CosineEmbeddingLoss, GaussianNLLLoss, HingeEmbeddingLoss,
                                  MarginRankingLoss, MultiLabelSoftMarginLoss, PoissonNLLLoss,
                                  SoftMarginLoss, TripletMarginLoss)
from .module import Module
from .normalization import GroupNorm, LayerNorm, RMSNorm
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d,
                      ConstantPad3d, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d,
                      ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, ZeroPad1d, ZeroPad2d,
                      ZeroPad3d)
from .parallel import DataParallel
from .parameter import Parameter
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell
from .adaptive_softmax import AdaptiveLogSoftmaxWithLoss
from .extra_loss_modules import *  # noqa: F401,F403  (MultiMarginLoss, CTCLoss, ...)
from .pooling_extra_modules import *  # noqa: F401,F403  (MaxUnpool*, LPPool*, LocalResponseNorm)
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d,
                      AdaptiveMaxPool2d, AdaptiveMaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d,
                      MaxPool1d, MaxPool2d, MaxPool3d)
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,
                          TransformerEncoder, TransformerEncoderLayer)
from .channelshuffle import ChannelShuffle
from .deprecated_layers import Container, NLLLoss2d
from .embedding_bag import EmbeddingBag
from .lazy import *  # noqa: F401,F403  (LazyLinear, LazyConv*d, LazyBatchNorm*d, ...)
from .noise_layers import AlphaDropout, FeatureAlphaDropout, RReLU
from .parameter import Buffer, UninitializedBuffer, UninitializedParameter
from .rnn import RNNBase, RNNCellBase
from .sync_batchnorm import SyncBatchNorm
