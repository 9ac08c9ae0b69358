#!/usr/bin/env python3
"""Reference logits from Hugging Face transformers for Alap's forward pass.

Builds LlamaForCausalLM (Llama 3 rope scaling), Qwen2ForCausalLM (QKV biases, tied embeddings)
and Qwen3ForCausalLM (q/k norms, head_dim * heads != hidden) at small but real-shaped
configurations, fills every parameter with the project's seeded generator (the same one
tests/support/seeded_weights.h implements in C++, so the weights are never shipped), runs a fixed
token sequence in float32 and writes, per model, the logits [n_tokens][n_vocab] as little-endian
float32 to <out>/<name>.logits.f32, plus a manifest <out>/hf_reference.txt.

Run on the machine that has PyTorch and transformers (the lent H200 machine):
    python3 tests/reference/hf_reference.py --out tests/core/model/data
The C++ test (tests/core/model/hf_reference_test.cpp) rebuilds the same weights, writes them as
GGUF with core's writer (with the llama Q/K row permutation of FORMATS.md §6) and compares.
"""
import argparse
import os
import sys

import numpy as np
import torch
import transformers

MASK64 = (1 << 64) - 1


def fnv1a64(text):
    h = 0xCBF29CE484222325
    for b in text.encode("utf-8"):
        h ^= b
        h = (h * 0x100000001B3) & MASK64
    return h


def splitmix64(x):
    """Vectorised splitmix64 over a uint64 numpy array (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def seeded_uniform(name, n):
    """n values in [-1, 1): element i = 2 * ((splitmix64(fnv1a64(name) + i) >> 40) / 2^24) - 1."""
    idx = np.arange(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = splitmix64(np.uint64(fnv1a64(name)) + idx)
    u = (z >> np.uint64(40)).astype(np.float64) / float(1 << 24)
    return (2.0 * u - 1.0).astype(np.float32)


def value_for(name, shape):
    """The generator's rule per parameter kind; shape is the PyTorch shape."""
    n = int(np.prod(shape))
    u = seeded_uniform(name, n).astype(np.float64)  # the float32 draws, then float64 arithmetic
    if name.endswith("norm.weight"):
        v = 1.0 + 0.25 * u
    elif name.endswith(".bias"):
        v = 0.2 * u
    elif "embed_tokens" in name:
        v = u
    else:  # linear weight [out, in]
        v = u * (1.7 / np.sqrt(shape[-1]))
    return torch.from_numpy(v.astype(np.float32).reshape(shape))


TOKENS = [1, 17, 300, 42, 5, 511, 128, 77, 260, 3, 99, 450, 12, 200, 64, 33, 401, 7, 250, 18]

MODELS = {
    # Llama 3 family: head_dim 64, GQA 8:2, Llama 3 rope scaling, untied output.
    "llama3": dict(
        cls="LlamaForCausalLM", cfg="LlamaConfig",
        vocab_size=512, hidden_size=512, intermediate_size=1024, num_hidden_layers=4,
        num_attention_heads=8, num_key_value_heads=2, head_dim=64, max_position_embeddings=8192,
        rms_norm_eps=1e-5, rope_theta=500000.0, tie_word_embeddings=False,
        rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                          original_max_position_embeddings=8192),
    ),
    # Qwen2.5 family: QKV biases, head_dim 128, GQA 4:2, tied embeddings, neox rope.
    "qwen2": dict(
        cls="Qwen2ForCausalLM", cfg="Qwen2Config",
        vocab_size=512, hidden_size=512, intermediate_size=1024, num_hidden_layers=4,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
        rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=True,
    ),
    # Qwen3 family: q/k RMS norms, head_dim 128 with 4 heads (512) on hidden 256, untied output.
    "qwen3": dict(
        cls="Qwen3ForCausalLM", cfg="Qwen3Config",
        vocab_size=512, hidden_size=256, intermediate_size=768, num_hidden_layers=4,
        num_attention_heads=4, num_key_value_heads=2, head_dim=128, max_position_embeddings=4096,
        rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=False,
    ),
}


def build(name, spec):
    spec = dict(spec)
    cls = getattr(transformers, spec.pop("cls"))
    cfg_cls = getattr(transformers, spec.pop("cfg"))
    rope_scaling = spec.pop("rope_scaling", None)
    theta = spec.pop("rope_theta")
    params = {"rope_type": "default", "rope_theta": theta}
    if rope_scaling:
        params.update(rope_scaling)
    try:  # transformers >= 5: rope_parameters
        cfg = cfg_cls(**spec, rope_parameters=params)
    except TypeError:
        extra = {"rope_theta": theta}
        if rope_scaling:
            extra["rope_scaling"] = rope_scaling
        cfg = cfg_cls(**spec, **extra)
    cfg._attn_implementation = "eager"
    torch.manual_seed(0)
    model = cls(cfg).float().eval()
    with torch.no_grad():
        for pname, p in model.named_parameters():
            p.copy_(value_for(pname, tuple(p.shape)))
    return model, cfg


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    lines = [f"# transformers {transformers.__version__}, torch {torch.__version__}; tokens " +
             " ".join(map(str, TOKENS))]
    for name, spec in MODELS.items():
        model, cfg = build(name, spec)
        ids = torch.tensor([TOKENS], dtype=torch.long)
        with torch.no_grad():
            logits = model(input_ids=ids).logits[0].double().float().numpy()
        path = os.path.join(args.out, f"{name}.logits.f32")
        logits.astype("<f4").tofile(path)
        rot = getattr(model.model, "rotary_emb", None)
        inv = rot.inv_freq.double().numpy() if rot is not None else None
        print(name, "logits", logits.shape, "absmax", float(np.abs(logits).max()),
              "inv_freq[0,-1]", None if inv is None else (float(inv[0]), float(inv[-1])), flush=True)
        params = sum(p.numel() for p in model.parameters())
        lines.append(f"{name} n_tokens={len(TOKENS)} n_vocab={spec['vocab_size']} params={params} "
                     f"argmax_last={int(logits[-1].argmax())}")
    with open(os.path.join(args.out, "hf_reference.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
