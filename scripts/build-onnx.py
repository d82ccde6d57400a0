"""Writes the ONNX graphs of all-MiniLM-L6-v2 that mira-embed runs with ONNX Runtime.

Usage: python3 scripts/build-onnx.py MODEL_DIR

Reads MODEL_DIR/model.safetensors and MODEL_DIR/config.json (installed by
scripts/fetch-model.sh, which runs this script with the pinned `onnx`, `numpy` and
`onnxruntime` packages on PYTHONPATH) and writes, in MODEL_DIR:

- model.onnx: the BERT encoder with masked mean pooling and L2 normalisation, f32.
  Inputs `input_ids` and `attention_mask` (int64, [batch, sequence]); output
  `embeddings` (f32, [batch, 384], unit length). Standard ONNX operators (opset 17),
  laid out as ONNX Runtime's transformer fusions expect them;
- model_int8.onnx: the same graph with the weights of every MatMul quantised to int8
  per output channel, activations quantised dynamically
  (`onnxruntime.quantization.quantize_dynamic`).

Both graphs are checked before they are written: the f32 graph against a float64 numpy
forward pass of the same weights (cosine >= 0.9999 on every test sequence), and
against shared/fixtures/minilm_reference.json when MIRA_SHARED_DIR or the repository's
sibling shared/ folder has it; the int8 graph against the f32 one (mean cosine >= 0.98).
Files are written under temporary names and renamed into place.
"""

import json
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
F32_FILE = "model.onnx"
INT8_FILE = "model_int8.onnx"
# Below these cosines a produced graph is refused.
F32_MIN_COSINE = 0.9999
INT8_MIN_MEAN_COSINE = 0.98


def fail(message):
    sys.exit(f"build-onnx: error: {message}")


def read_safetensors(path):
    """The tensors of a safetensors file as numpy arrays (little-endian f32/i64 only)."""
    dtypes = {"F32": np.float32, "I64": np.int64}
    with open(path, "rb") as f:
        data = f.read()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + header_len])
    body = data[8 + header_len :]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] not in dtypes:
            fail(f"{path}: tensor {name} has unsupported dtype {info['dtype']}")
        start, end = info["data_offsets"]
        tensors[name] = np.frombuffer(body[start:end], dtype=dtypes[info["dtype"]]).reshape(
            info["shape"]
        )
    return tensors


class Graph:
    """Accumulates nodes and initializers (constants are named by their value and shared)."""

    def __init__(self):
        self.nodes = []
        self.inits = []
        self.names = set()
        self.count = 0

    def weight(self, name, array):
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def f32(self, value):
        """A float scalar constant."""
        return self._small(np.array(value, np.float32), f"f32_{value}")

    def i64(self, *values):
        """A 1-D int64 constant."""
        return self._small(np.array(values, np.int64), "i64_" + "_".join(map(str, values)))

    def _small(self, array, name):
        if name not in self.names:
            self.names.add(name)
            self.weight(name, array)
        return name

    def op(self, op_type, inputs, name=None, **attrs):
        self.count += 1
        out = name or f"{op_type.lower()}_{self.count}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=f"n{self.count}", **attrs))
        return out


def linear(g, x, w, prefix):
    """x @ W^T + b for a torch Linear stored as [out, in]."""
    weight = g.weight(f"{prefix}.weight_t", w[f"{prefix}.weight"].T)
    bias = g.weight(f"{prefix}.bias", w[f"{prefix}.bias"])
    return g.op("Add", [g.op("MatMul", [x, weight]), bias])


def layer_norm(g, x, w, prefix, eps):
    gamma = g.weight(f"{prefix}.weight", w[f"{prefix}.weight"])
    beta = g.weight(f"{prefix}.bias", w[f"{prefix}.bias"])
    return g.op("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=eps)


def gelu(g, x):
    """Exact GELU, x * 0.5 * (1 + erf(x / sqrt(2))), in the form ORT fuses."""
    erf = g.op("Erf", [g.op("Div", [x, g.f32(np.sqrt(2.0))])])
    return g.op("Mul", [g.op("Mul", [x, g.op("Add", [erf, g.f32(1.0)])]), g.f32(0.5)])


def heads_of(g, x, shape, perm):
    """[batch, sequence, hidden] -> per-head layout (`perm` of [batch, sequence, heads, head_dim])."""
    return g.op("Transpose", [g.op("Reshape", [x, shape])], perm=perm)


def build(w, cfg):
    """The graph, laid out like a PyTorch export of BertModel so that ONNX Runtime fuses attention,
    skip-LayerNorm and GELU when it loads it."""
    hidden = cfg["hidden_size"]
    heads = cfg["num_attention_heads"]
    head_dim = hidden // heads
    eps = float(cfg["layer_norm_eps"])
    g = Graph()

    # Embeddings: word + position (0..sequence) + token type 0, then LayerNorm.
    words = g.op("Gather", [g.weight("word_embeddings", w["embeddings.word_embeddings.weight"]), "input_ids"])
    seq_len = g.op("Slice", [g.op("Shape", ["input_ids"]), g.i64(1), g.i64(2)])
    all_positions = g.weight("position_ids", np.arange(cfg["max_position_embeddings"], dtype=np.int64)[None, :])
    position_ids = g.op("Slice", [all_positions, g.i64(0), seq_len, g.i64(1)])
    positions = g.op("Gather", [g.weight("position_embeddings", w["embeddings.position_embeddings.weight"]), position_ids])
    type0 = g.weight("token_type_embedding_0", w["embeddings.token_type_embeddings.weight"][0])
    x = g.op("Add", [g.op("Add", [words, positions]), type0])
    x = layer_norm(g, x, w, "embeddings.LayerNorm", eps)

    # Additive attention mask [batch, 1, 1, sequence]: 0 for tokens, -10000 for padding.
    mask4 = g.op("Unsqueeze", [g.op("Unsqueeze", ["attention_mask", g.i64(1)]), g.i64(2)])
    padding = g.op("Sub", [g.f32(1.0), g.op("Cast", [mask4], to=TensorProto.FLOAT)])
    mask_bias = g.op("Mul", [padding, g.f32(-10000.0)])

    split = g.i64(0, 0, heads, head_dim)
    merge = g.i64(0, 0, hidden)
    for layer in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{layer}"
        q = heads_of(g, linear(g, x, w, f"{p}.attention.self.query"), split, [0, 2, 1, 3])
        k = heads_of(g, linear(g, x, w, f"{p}.attention.self.key"), split, [0, 2, 3, 1])
        v = heads_of(g, linear(g, x, w, f"{p}.attention.self.value"), split, [0, 2, 1, 3])
        scores = g.op("Div", [g.op("MatMul", [q, k]), g.f32(np.sqrt(head_dim))])
        probs = g.op("Softmax", [g.op("Add", [scores, mask_bias])], axis=-1)
        context = g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
        attended = linear(g, g.op("Reshape", [context, merge]), w, f"{p}.attention.output.dense")
        x = layer_norm(g, g.op("Add", [attended, x]), w, f"{p}.attention.output.LayerNorm", eps)
        inner = gelu(g, linear(g, x, w, f"{p}.intermediate.dense"))
        out = linear(g, inner, w, f"{p}.output.dense")
        x = layer_norm(g, g.op("Add", [out, x]), w, f"{p}.output.LayerNorm", eps)

    # Masked mean pooling, then L2 normalisation.
    mask3 = g.op("Unsqueeze", [g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT), g.i64(2)])
    summed = g.op("ReduceSum", [g.op("Mul", [x, mask3]), g.i64(1)], keepdims=0)
    mean = g.op("Div", [summed, g.op("ReduceSum", [mask3, g.i64(1)], keepdims=0)])
    norm = g.op("Max", [g.op("ReduceL2", [mean], axes=[1], keepdims=1), g.f32(1e-12)])
    g.op("Div", [mean, norm], name="embeddings")

    graph = helper.make_graph(
        g.nodes,
        "all-MiniLM-L6-v2",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "sequence"]),
        ],
        [helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, ["batch", hidden])],
        g.inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="mira build-onnx")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def reference_forward(w, cfg, ids):
    """Float64 numpy forward pass of one unpadded token sequence: the unit embedding."""
    from math import erf, sqrt

    hidden = cfg["hidden_size"]
    heads = cfg["num_attention_heads"]
    hd = hidden // heads
    eps = float(cfg["layer_norm_eps"])
    f = {k: v.astype(np.float64) for k, v in w.items() if v.dtype == np.float32}

    def ln(x, p):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * f[f"{p}.weight"] + f[f"{p}.bias"]

    def lin(x, p):
        return x @ f[f"{p}.weight"].T + f[f"{p}.bias"]

    verf = np.vectorize(erf)
    n = len(ids)
    x = f["embeddings.word_embeddings.weight"][ids] + f["embeddings.position_embeddings.weight"][:n] + f["embeddings.token_type_embeddings.weight"][0]
    x = ln(x, "embeddings.LayerNorm")
    for layer in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{layer}"
        q, k, v = (lin(x, f"{p}.attention.self.{t}").reshape(n, heads, hd).transpose(1, 0, 2) for t in ("query", "key", "value"))
        s = q @ k.transpose(0, 2, 1) / sqrt(hd)
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        ctx = (s @ v).transpose(1, 0, 2).reshape(n, hidden)
        x = ln(lin(ctx, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
        h = lin(x, f"{p}.intermediate.dense")
        h = h * 0.5 * (1.0 + verf(h / sqrt(2.0)))
        x = ln(lin(h, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
    mean = x.mean(0)
    return mean / np.linalg.norm(mean)


def run(session, sequences):
    """Embeds token sequences in one padded batch."""
    longest = max(len(s) for s in sequences)
    ids = np.zeros((len(sequences), longest), np.int64)
    mask = np.zeros((len(sequences), longest), np.int64)
    for i, s in enumerate(sequences):
        ids[i, : len(s)] = s
        mask[i, : len(s)] = 1
    return session.run(["embeddings"], {"input_ids": ids, "attention_mask": mask})[0]


def cosine(a, b):
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_sequences(vocab):
    """Deterministic token sequences of assorted lengths ([CLS] … [SEP]), including 256."""
    rng = np.random.default_rng(16)
    return [[101] + list(rng.integers(1000, vocab, size=n - 2)) + [102] for n in (2, 5, 17, 64, 256)]


def fixture_cases():
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = []
    if os.environ.get("MIRA_SHARED_DIR"):
        candidates.append(os.path.join(os.environ["MIRA_SHARED_DIR"], "fixtures", "minilm_reference.json"))
    candidates.append(os.path.join(here, "..", "..", "shared", "fixtures", "minilm_reference.json"))
    candidates.append(os.path.join(here, "..", "..", "..", "shared", "fixtures", "minilm_reference.json"))
    for path in candidates:
        if os.path.isfile(path):
            with open(path) as f:
                return path, json.load(f)["cases"]
    return None, []


def check_f32(session, w, cfg):
    sequences = test_sequences(cfg["vocab_size"])
    got = run(session, sequences)
    for seq, v in zip(sequences, got):
        c = cosine(v, reference_forward(w, cfg, seq))
        if c < F32_MIN_COSINE:
            fail(f"the f32 graph differs from the numpy forward pass (cosine {c:.6f} for {len(seq)} tokens)")
    path, cases = fixture_cases()
    if cases:
        got = run(session, [c["token_ids"] for c in cases])
        worst = min(cosine(v, c["embedding"]) for v, c in zip(got, cases))
        if worst < F32_MIN_COSINE:
            fail(f"the f32 graph differs from {path} (minimum cosine {worst:.6f})")
        print(f"build-onnx: f32 graph matches {len(cases)} reference embeddings (minimum cosine {worst:.7f})")
    else:
        print("build-onnx: f32 graph matches the numpy forward pass (reference fixture not found)")


def check_int8(session_int8, session_f32, cfg):
    sequences = test_sequences(cfg["vocab_size"])
    path, cases = fixture_cases()
    sequences += [c["token_ids"] for c in cases]
    a = run(session_int8, sequences)
    b = run(session_f32, sequences)
    cosines = [cosine(x, y) for x, y in zip(a, b)]
    mean = sum(cosines) / len(cosines)
    if mean < INT8_MIN_MEAN_COSINE:
        fail(f"the int8 graph is too far from the f32 one (mean cosine {mean:.4f})")
    print(f"build-onnx: int8 graph: mean cosine {mean:.4f}, minimum {min(cosines):.4f} against f32")


def session(path):
    import onnxruntime as ort

    ort.set_default_logger_severity(3)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def main():
    if len(sys.argv) != 2:
        fail("usage: build-onnx.py MODEL_DIR")
    model_dir = sys.argv[1]
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    if cfg.get("model_type") != "bert" or cfg.get("hidden_act") != "gelu":
        fail("config.json does not describe a BERT model with exact GELU")
    weights = read_safetensors(os.path.join(model_dir, "model.safetensors"))

    f32_tmp = os.path.join(model_dir, F32_FILE + ".tmp")
    int8_tmp = os.path.join(model_dir, INT8_FILE + ".tmp")
    onnx.save(build(weights, cfg), f32_tmp)
    f32 = session(f32_tmp)
    check_f32(f32, weights, cfg)

    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    logging.getLogger().setLevel(logging.ERROR)

    quantize_dynamic(
        f32_tmp,
        int8_tmp,
        op_types_to_quantize=["MatMul"],
        per_channel=True,
        weight_type=QuantType.QInt8,
    )
    check_int8(session(int8_tmp), f32, cfg)
    os.replace(f32_tmp, os.path.join(model_dir, F32_FILE))
    os.replace(int8_tmp, os.path.join(model_dir, INT8_FILE))
    print(f"build-onnx: wrote {F32_FILE} and {INT8_FILE} in {model_dir}")


if __name__ == "__main__":
    main()
