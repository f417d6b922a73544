"""Writes a tiny LlamaForCausalLM for vLLM's --load-format dummy: its config, and a word-level tokenizer built with
the tokenizers library, so that nothing is downloaded. Words are "w0".."w508"; a prompt is words separated by spaces.

Usage: python make-tiny-model.py DIR
"""
import json
import os
import sys

from tokenizers import Tokenizer, decoders, models, pre_tokenizers

WORDS = 509


def main(out):
    os.makedirs(out, exist_ok=True)
    specials = ["<unk>", "<s>", "</s>"]
    vocab = {token: i for i, token in enumerate(specials + ["w%d" % i for i in range(WORDS)])}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.decoder = decoders.WordPiece(prefix="##")
    tokenizer.save(os.path.join(out, "tokenizer.json"))
    write(out, "tokenizer_config.json", {"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<s>", "eos_token": "</s>",
                                         "unk_token": "<unk>", "model_max_length": 8192})
    # 8 layers of width 512 stream about 150 tokens a second on 2 cores: long enough to outlast a drain.
    # A head size of 64 is one the CPU attention backend takes.
    write(out, "config.json", {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 512,
                               "intermediate_size": 1024, "num_attention_heads": 8, "num_key_value_heads": 8, "head_dim": 64,
                               "num_hidden_layers": 8, "vocab_size": len(vocab), "max_position_embeddings": 8192,
                               "rms_norm_eps": 1e-5, "bos_token_id": 1, "eos_token_id": 2, "torch_dtype": "bfloat16",
                               "tie_word_embeddings": False, "rope_theta": 10000.0})
    write(out, "generation_config.json", {"bos_token_id": 1, "eos_token_id": 2})


def write(out, name, value):
    with open(os.path.join(out, name), "w") as f:
        json.dump(value, f)


if __name__ == "__main__":
    main(sys.argv[1])
