#!/usr/bin/python3
"""Exact saved-tensor accounting of one Llama decoder block, for ftbound's activation model.

Builds a block that does what HuggingFace's LlamaDecoderLayer does on its eager path (transformers
models/llama/modeling_llama.py: LlamaRMSNorm upcasting to fp32, rotary embedding, repeat_kv, eager attention
with an fp32 softmax, SwiGLU MLP) and peft's LoRA Linear (tuners/lora/layer.py: base_layer(x) +
lora_B(lora_A(dropout(x))) * scaling), runs one forward under torch.autograd.graph.saved_tensors_hooks and
sums the bytes of every distinct storage autograd keeps for backward. Parameters, the rotary tables and the
attention mask exist outside the block (shared by all blocks) and are not counted; the block's input is
counted when something in the block saves it. LoRA dropout is left out: on the CPU ATen's dropout keeps its
noise in the input dtype (Dropout.cpp _dropout_impl) where CUDA's fused native_dropout keeps a 1-byte mask,
so a CPU count would not say what a GPU run keeps.

Cases: no recompute, full recompute (torch.utils.checkpoint around the block, reentrant as HF's default),
LoRA (all linears; q,v only), a frozen base (no weight of the block trains, the input still
needs its gradient), several shapes, bf16 and fp32 parameters without autocast ("pure").

    /usr/bin/python3 tools/groundtruth/saved_tensors.py [--out validation/measured/saved-tensors]

Writes blocks.csv (one row per case: the shape, what trains, the saved bytes) and raw.json (every saved
storage's shape, dtype and the autograd nodes that keep it, the torch version). Runs on the CPU in a few
seconds. saved_bytes leaves out what only this torch (1.13, Debian) keeps and torch >= 2.0 does not
(ONLY_ON_TORCH_1_13 below, with its source); saved_bytes_torch_1_13 is everything seen here.
"""
import argparse
import csv
import json
import math
import os
import platform

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


class RMSNorm(nn.Module):
    """transformers LlamaRMSNorm.forward."""

    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        input_dtype = x.dtype
        x = x.to(torch.float32)
        variance = x.pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(variance + self.eps)
        return self.weight * x.to(input_dtype)


class LoraLinear(nn.Module):
    """peft tuners/lora/layer.py Linear.forward: result = base_layer(x) + lora_B(lora_A(dropout(x))) * scaling."""

    def __init__(self, base, rank, alpha, dropout):
        super().__init__()
        self.base_layer = base
        self.lora_A = nn.Linear(base.in_features, rank, bias=False, dtype=base.weight.dtype)
        self.lora_B = nn.Linear(rank, base.out_features, bias=False, dtype=base.weight.dtype)
        self.dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        self.scaling = alpha / rank

    def forward(self, x):
        result = self.base_layer(x)
        x = x.to(self.lora_A.weight.dtype)
        return result + self.lora_B(self.lora_A(self.dropout(x))) * self.scaling


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def repeat_kv(x, n_rep):
    """transformers repeat_kv: (b, kv, s, d) -> (b, kv * n_rep, s, d)."""
    if n_rep == 1:
        return x
    b, kv, s, d = x.shape
    return x[:, :, None, :, :].expand(b, kv, n_rep, s, d).reshape(b, kv * n_rep, s, d)


class Block(nn.Module):
    def __init__(self, cfg, dtype):
        super().__init__()
        h, i = cfg["hidden"], cfg["ffn"]
        self.nh, self.nkv, self.hd = cfg["heads"], cfg["kv_heads"], h // cfg["heads"]
        lin = lambda a, b: nn.Linear(a, b, bias=False, dtype=dtype)
        self.input_layernorm = RMSNorm(h).to(dtype)
        self.q_proj, self.k_proj = lin(h, self.nh * self.hd), lin(h, self.nkv * self.hd)
        self.v_proj, self.o_proj = lin(h, self.nkv * self.hd), lin(self.nh * self.hd, h)
        self.post_attention_layernorm = RMSNorm(h).to(dtype)
        self.gate_proj, self.up_proj, self.down_proj = lin(h, i), lin(h, i), lin(i, h)

    def attention(self, x, cos, sin, mask):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.nh, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.nkv, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.nkv, self.hd).transpose(1, 2)
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        q = (q * cos) + (rotate_half(q) * sin)
        k = (k * cos) + (rotate_half(k) * sin)
        k, v = repeat_kv(k, self.nh // self.nkv), repeat_kv(v, self.nh // self.nkv)
        w = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.hd) + mask
        w = F.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
        w = F.dropout(w, p=0.0, training=self.training)
        out = torch.matmul(w, v).transpose(1, 2).contiguous().reshape(b, s, -1)
        return self.o_proj(out)

    def mlp(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


def block_forward(block, x, cos, sin, mask):
    """LlamaDecoderLayer.forward: pre-norm attention and MLP, each added to the residual stream."""
    h = x + block.attention(block.input_layernorm(x), cos, sin, mask)
    return h + block.mlp(block.post_attention_layernorm(h))


LINEARS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def build(cfg, dtype, method, lora):
    torch.manual_seed(0)
    block = Block(cfg, dtype)
    block.train()
    if method in ("lora", "frozen"):
        for p in block.parameters():
            p.requires_grad_(False)
    if method == "lora":
        for name in lora["targets"]:
            setattr(block, name, LoraLinear(getattr(block, name), lora["rank"], lora["alpha"], lora["dropout"]))
    return block


def rotary(s, hd, dtype):
    inv = 1.0 / (10000.0 ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))
    ang = torch.outer(torch.arange(s, dtype=torch.float32), inv)
    emb = torch.cat((ang, ang), dim=-1)
    return emb.cos()[None].to(dtype), emb.sin()[None].to(dtype)


def saving_nodes(root):
    """Storage -> names of the autograd nodes that keep it (their _saved_* tensors), over the whole graph."""
    by_storage, seen, stack = {}, set(), [root]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        for attr in dir(node):
            if attr.startswith("_saved_"):
                value = getattr(node, attr)
                for t in value if isinstance(value, (list, tuple)) else [value]:
                    if isinstance(t, torch.Tensor):
                        by_storage.setdefault(t.storage().data_ptr(), set()).add(type(node).__name__)
        stack.extend(fn for fn, _ in node.next_functions)
    return by_storage


# torch 1.13's mean.dim derivative reads self.numel() at backward time, so autograd saves its input;
# torch >= 2.0 writes it with self.sym_numel(), saved as a number (pytorch tools/autograd/derivatives.yaml,
# mean.dim). A storage kept only by MeanBackward1 is therefore not kept on the torch versions training runs use.
ONLY_ON_TORCH_1_13 = {"MeanBackward1"}


def saved_bytes(cfg, dtype, method, recompute, batch, seq, lora):
    """Bytes of the distinct storages saved for backward by one block forward: all of them on this torch,
    those a torch >= 2.0 also keeps, and a description of each."""
    block = build(cfg, dtype, method, lora)
    hd = cfg["hidden"] // cfg["heads"]
    cos, sin = rotary(seq, hd, dtype)
    mask = torch.full((seq, seq), float("-inf")).triu(1).to(dtype)
    x = torch.randn(batch, seq, cfg["hidden"], dtype=dtype, requires_grad=True)
    outside = {t.storage().data_ptr() for t in list(block.parameters()) + [cos, sin, mask]}
    seen = {}

    def pack(t):
        st = t.storage()
        ptr = st.data_ptr()
        if ptr not in outside and ptr not in seen:
            seen[ptr] = (st.size() * t.element_size(), list(t.shape), str(t.dtype).replace("torch.", ""))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        if recompute == "full":
            out = torch.utils.checkpoint.checkpoint(block_forward, block, x, cos, sin, mask, use_reentrant=True)
        else:
            out = block_forward(block, x, cos, sin, mask)
    keepers = saving_nodes(out.grad_fn)
    described = []
    total = total_torch2 = 0
    for ptr, (n, shape, dt) in seen.items():
        nodes = sorted(keepers.get(ptr, {"(custom function)"}))
        total += n
        if not set(nodes) <= ONLY_ON_TORCH_1_13:
            total_torch2 += n
        described.append(dict(bytes=n, shape=shape, dtype=dt, kept_by=nodes))
    out.float().sum().backward()   # the graph is complete: backward runs
    return total, total_torch2, sorted(described, key=lambda d: -d["bytes"])


SHAPES = {  # Llama-family blocks, small enough for a CPU: hidden, heads, kv heads, FFN
    "h256-gqa": dict(hidden=256, heads=8, kv_heads=2, ffn=688),
    "h512-mha": dict(hidden=512, heads=8, kv_heads=8, ffn=1376),
    "h384-gqa": dict(hidden=384, heads=6, kv_heads=3, ffn=1024),
}
LORA_ALL = dict(rank=8, alpha=16, dropout=0.0, targets=LINEARS)
LORA_QV = dict(rank=16, alpha=32, dropout=0.0, targets=["q_proj", "v_proj"])

CASES = [  # (id, shape, dtype, method, recompute, batch, seq, lora)
    ("h256-bf16-full-b2-s64", "h256-gqa", "bf16", "full", "none", 2, 64, None),
    ("h256-bf16-full-b1-s128", "h256-gqa", "bf16", "full", "none", 1, 128, None),
    ("h512-bf16-full-b2-s32", "h512-mha", "bf16", "full", "none", 2, 32, None),
    ("h384-fp32-full-b2-s48", "h384-gqa", "fp32", "full", "none", 2, 48, None),
    ("h256-bf16-fullac-b2-s64", "h256-gqa", "bf16", "full", "full", 2, 64, None),
    ("h512-bf16-fullac-b1-s96", "h512-mha", "bf16", "full", "full", 1, 96, None),
    ("h256-bf16-lora-all-b2-s64", "h256-gqa", "bf16", "lora", "none", 2, 64, LORA_ALL),
    ("h512-bf16-lora-qv-b2-s32", "h512-mha", "bf16", "lora", "none", 2, 32, LORA_QV),
    ("h384-bf16-lora-qv-b1-s64", "h384-gqa", "bf16", "lora", "none", 1, 64, LORA_QV),
    ("h384-fp32-lora-all-b1-s64", "h384-gqa", "fp32", "lora", "none", 1, 64, LORA_ALL),
    ("h256-bf16-lora-all-fullac-b2-s64", "h256-gqa", "bf16", "lora", "full", 2, 64, LORA_ALL),
    ("h256-bf16-frozen-b2-s64", "h256-gqa", "bf16", "frozen", "none", 2, 64, None),
    ("h512-bf16-frozen-b1-s64", "h512-mha", "bf16", "frozen", "none", 1, 64, None),
]


def write_tables(out, csv_name, rows, json_name, raw):
    """The rows as out/csv_name (header from the first row) and every storage as out/json_name."""
    with open(os.path.join(out, csv_name), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(out, json_name), "w") as f:
        json.dump(raw, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(REPO, "validation", "measured", "saved-tensors"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    dtypes = {"bf16": torch.bfloat16, "fp32": torch.float32}
    rows, raw = [], {"torch": torch.__version__, "python": platform.python_version(), "cases": {}}
    for cid, shape, dt, method, recompute, b, s, lora in CASES:
        cfg = SHAPES[shape]
        total, total_torch2, storages = saved_bytes(cfg, dtypes[dt], method, recompute, b, s, lora)
        rows.append(dict(id=cid, hidden=cfg["hidden"], heads=cfg["heads"], kv_heads=cfg["kv_heads"], ffn=cfg["ffn"],
                         dtype=dt, method=method, recompute=recompute, micro_batch=b, seq_len=s,
                         lora_rank=lora["rank"] if lora else 0, lora_dropout=lora["dropout"] if lora else 0,
                         lora_targets=" ".join(lora["targets"]) if lora else "",
                         saved_bytes=total_torch2, saved_bytes_torch_1_13=total))
        raw["cases"][cid] = storages
        print(f"{cid:36s} {total_torch2:>12,d} bytes ({total:,d} on torch {torch.__version__}) in {len(storages)} storages")
    write_tables(args.out, "blocks.csv", rows, "raw.json", raw)


if __name__ == "__main__":
    main()
