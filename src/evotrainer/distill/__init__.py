"""Distillation: fine-tune a LoRA adapter on the embedded model and serve it with llama.cpp.

The pieces, each in its own module:

- ``extra``: the optional dependencies (``pip install 'evotrainer[distill]'``: torch,
  transformers, peft, gguf), imported only when distillation is used; ``require()`` raises
  ``MissingExtraError`` (a ``ConfigError``) naming the install command when one is missing.
- ``pairs``: a training pair (the chat messages as the task renders them for the agent, the
  target completion, a weight, where it came from) and its tokenisation with the model's own
  chat template; the loss covers the completion's tokens only.
- ``settings``: ``LoraSettings``, the frozen knobs of one training (rank, alpha, steps ...).
- ``base_model``: the embedded SmolLM2-135M-Instruct loaded by transformers from the shipped
  GGUF file (dequantised, offline), kept once per process.
- ``train``: ``train_adapter(pairs, settings, out_dir, progress=None) -> AdapterResult``.
- ``export``: the trained LoRA written as a llama.cpp GGUF adapter named by its sha256.
- ``serve``: an embedded llama.cpp client with the adapter applied.
- ``reference``: greedy answers of the training stack (transformers + peft), to compare with
  the serving stack.

Nothing here imports torch at module import except ``base_model``, ``train``, ``export`` and
``reference``, which call ``extra.require()`` first; ``pairs``, ``settings``, ``extra`` and
``serve`` work without the extra (serving needs only llama.cpp). Hashing and verifying adapter
files is ``evotrainer.llm.adapter_file`` (standard library only; the export, the llama.cpp
backend and the engine use it).
"""
