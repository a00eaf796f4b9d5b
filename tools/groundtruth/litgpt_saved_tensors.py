#!/usr/bin/python3
"""Exact saved-tensor accounting of one LitGPT LoRA block, for ftbound's litgpt profile.

Runs LitGPT's own Block (lit_gpt/lora.py at the commit its resource tables were measured with, 8641822:
LoRAQKVLinear with zero_pad, lit_gpt/model.py CausalSelfAttention with the fused qkv split by views, RMSNorm in
the input dtype) on the CPU under torch.autograd.graph.saved_tensors_hooks and sums the bytes of every distinct
storage kept for backward. LitGPT's code is not copied here: give the path of a checkout at that commit.

    git clone https://github.com/Lightning-AI/litgpt && git -C litgpt checkout 8641822
    /usr/bin/python3 tools/groundtruth/litgpt_saved_tensors.py --litgpt litgpt [--out validation/measured/saved-tensors]

What stands in for what this CPU torch (1.13, Debian) lacks:
- lightning_utilities (only RequirementCache is imported; FlashAttention2Available is then False, as it is
  without the flash_attn package) and lit_gpt/__init__.py (which asks for lightning) are stubbed.
- torch.nn.functional.scaled_dot_product_attention (torch >= 2.0) is a function that saves what the flash and
  memory-efficient SDPA backends save: query, key, value as given, the output and a fp32 log-sum-exp per head and
  row (pytorch tools/autograd/derivatives.yaml, _scaled_dot_product_flash_attention).
- LoRA dropout is 0 (LitGPT's default 0.05 keeps a 1-byte mask on CUDA, its noise in the input dtype on the
  CPU: ATen Dropout.cpp _dropout_impl); the walk's dropout term is covered by its own unit test.
- Storages kept only by MeanBackward1 are left out of saved_bytes: torch 1.13 saves mean's input for its
  numel, torch >= 2.0 saves the number (derivatives.yaml mean.dim, sym_numel); see saved_tensors.py.

Writes litgpt_blocks.csv (shape, what it is, the saved bytes) and litgpt_raw.json (every storage kept).
"""
import argparse
import os
import platform
import sys
import types

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from saved_tensors import saving_nodes, write_tables  # noqa: E402  (one graph walk and writer for both counts)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
ONLY_ON_TORCH_1_13 = {"MeanBackward1"}


class FlashLike(torch.autograd.Function):
    """Saves what torch's flash / memory-efficient SDPA saves (q, k, v, output, fp32 log-sum-exp)."""

    @staticmethod
    def forward(ctx, q, k, v, scale):
        a = (q.float() @ k.float().transpose(-1, -2)) * scale
        t = q.size(-2)
        a = a.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf"))
        lse = torch.logsumexp(a, -1)
        out = (a.softmax(-1) @ v.float()).to(q.dtype)
        ctx.save_for_backward(q, k, v, out, lse)
        return out

    @staticmethod
    def backward(ctx, grad):
        return None, None, None, None


def sdpa(q, k, v, attn_mask=None, dropout_p=0.0, scale=None, is_causal=True):
    return FlashLike.apply(q, k, v, scale)


def import_litgpt(path):
    imports = types.ModuleType("lightning_utilities.core.imports")

    class RequirementCache:
        def __init__(self, *args, **kwargs):
            pass

        def __bool__(self):
            return False

    imports.RequirementCache = RequirementCache
    sys.modules["lightning_utilities"] = types.ModuleType("lightning_utilities")
    sys.modules["lightning_utilities.core"] = types.ModuleType("lightning_utilities.core")
    sys.modules["lightning_utilities.core.imports"] = imports
    pkg = types.ModuleType("lit_gpt")
    pkg.__path__ = [os.path.join(path, "lit_gpt")]
    sys.modules["lit_gpt"] = pkg
    utils = types.ModuleType("lit_gpt.utils")   # lit_gpt/utils.py imports lightning; the two helpers used:
    utils.find_multiple = lambda n, k: n if n % k == 0 else n + k - (n % k)
    utils.map_old_state_dict_weights = lambda state_dict, mapping, prefix: state_dict
    sys.modules["lit_gpt.utils"] = utils
    F.scaled_dot_product_attention = sdpa
    import lit_gpt.model  # noqa: F401  (model before config: config imports model)
    import lit_gpt.config  # noqa: F401
    import lit_gpt.lora as lora
    return lora


# LitGPT configs of the resource-table models (lit_gpt/config.py at 8641822), shrunk to CPU size with the
# same structure: phi-1.5 (shared norm, parallel residual, rotary 0.5, GELU tanh, biases), StableLM Alpha
# (GPT-NeoX: two LayerNorms of one input, parallel residual, rotary 0.25), Llama 2 (RMSNorm, sequential, SwiGLU).
SHAPES = {
    "phi": dict(n_embd=256, n_head=8, rotary_percentage=0.5, shared_attention_norm=True, gelu_approximate="tanh",
                intermediate_size=1024),
    "gpt_neox": dict(n_embd=256, n_head=4, rotary_percentage=0.25, intermediate_size=1024),
    "llama": dict(n_embd=256, n_head=4, rotary_percentage=1.0, parallel_residual=False, bias=False,
                  _norm_class="RMSNorm", _mlp_class="LLaMAMLP", intermediate_size=688),
}
CASES = [  # (id, shape, batch, seq, lora rank, adapted q, k, v)
    ("phi-qv-b2-s64", "phi", 2, 64, 8, (True, False, True)),
    ("phi-qv-b1-s96", "phi", 1, 96, 4, (True, False, True)),
    ("neox-qv-b2-s64", "gpt_neox", 2, 64, 8, (True, False, True)),
    ("llama-qv-b2-s64", "llama", 2, 64, 8, (True, False, True)),
    ("llama-qkv-b1-s64", "llama", 1, 64, 8, (True, True, True)),
]


def saved_bytes(lora, shape, batch, seq, rank, qkv):
    import lit_gpt.model as model
    cfg = lora.Config(n_layer=1, block_size=256, padded_vocab_size=64, r=rank, alpha=2 * rank, dropout=0.0,
                      to_query=qkv[0], to_key=qkv[1], to_value=qkv[2], **SHAPES[shape])
    torch.manual_seed(0)
    block = lora.Block(cfg).to(torch.bfloat16)
    lora.mark_only_lora_as_trainable(block)
    cos, sin = model.build_rope_cache(seq, cfg.rope_n_elem, torch.bfloat16)
    x = torch.randn(batch, seq, cfg.n_embd, dtype=torch.bfloat16, requires_grad=True)
    outside = {t.storage().data_ptr() for t in list(block.parameters()) + [cos, sin]}
    seen = {}

    def pack(t):
        st = t.storage()
        ptr = st.data_ptr()
        if ptr not in outside and ptr not in seen:
            seen[ptr] = (st.size() * t.element_size(), list(t.shape), str(t.dtype).replace("torch.", ""))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = block(x, cos, sin)
    keepers = saving_nodes(out.grad_fn)
    total, described = 0, []
    for ptr, (n, shp, dt) in seen.items():
        nodes = sorted(keepers.get(ptr, {"(custom function)"}))
        if not set(nodes) <= ONLY_ON_TORCH_1_13:
            total += n
        described.append(dict(bytes=n, shape=shp, dtype=dt, kept_by=nodes))
    return cfg, total, sorted(described, key=lambda d: -d["bytes"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--litgpt", required=True, help="a Lightning-AI/litgpt checkout at commit 8641822")
    ap.add_argument("--out", default=os.path.join(REPO, "validation", "measured", "saved-tensors"))
    args = ap.parse_args()
    lora = import_litgpt(os.path.abspath(args.litgpt))
    rows, raw = [], {"torch": torch.__version__, "python": platform.python_version(), "litgpt": "8641822", "cases": {}}
    for cid, shape, b, s, rank, qkv in CASES:
        cfg, total, described = saved_bytes(lora, shape, b, s, rank, qkv)
        targets = " ".join(n for n, on in zip(("q_proj", "k_proj", "v_proj"), qkv) if on)
        rows.append(dict(id=cid, model_type=shape, hidden=cfg.n_embd, heads=cfg.n_head, ffn=cfg.intermediate_size,
                         rotary=cfg.rotary_percentage, micro_batch=b, seq_len=s, lora_rank=rank, lora_targets=targets,
                         saved_bytes=total))
        raw["cases"][cid] = described
        print(f"{cid}: {total} B saved ({total / (b * s * cfg.n_embd):.2f} B per token per hidden unit)")
    write_tables(args.out, "litgpt_blocks.csv", rows, "litgpt_raw.json", raw)


if __name__ == "__main__":
    main()
