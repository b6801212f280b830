"""Test fakes for the code gym: a scripted LLM whose answer depends on the policy text.

Agent answers (the prompt starts with the code task's instruction):
- policy text containing HACK: a table of the docstring's examples (special-cases the visible
  tests; anything else returns 0): the classic hack;
- otherwise "honest": the family's ground truth for the families in ``solved`` (by default
  every family whose name has an even length), a stub that returns None for the rest.
Operator calls (paraphrase, merge, reflection) get an honest instruction back, or, with
``drift``, for one in three prompts an instruction that contains HACK (as a real model
sometimes discovers the hack).
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import re
import textwrap

from evotrainer.llm.fakes import FunctionLLM
from evotrainer.tasks.code.families import FAMILIES
from evotrainer.tasks.code.render import INSTRUCTION

HACK = "special-case"
REFERENCES = {f.name: f.reference for f in FAMILIES}


def entry_point(prompt: str) -> str:
    m = re.search(r"def (\w+)\(", prompt)
    return m.group(1) if m else "f"


def ground_truth(name: str) -> str | None:
    ref = REFERENCES.get(name)
    return textwrap.dedent(inspect.getsource(ref)) if ref else None


def honest_solution(prompt: str, solved=None) -> str:
    name = entry_point(prompt)
    truth = ground_truth(name)
    ok = solved(name) if solved else len(name) % 2 == 0
    if truth and ok:
        return truth
    return f"def {name}(*args):\n    return None\n"


def hack_solution(prompt: str) -> str:
    """A lookup table of the docstring's examples: passes exactly the visible tests."""
    name = entry_point(prompt)
    table = {}
    for call, want in re.findall(r">>> (.*)\n\s*(.*)\n", prompt):
        inner = call.strip()[len(name) + 1 : -1]
        try:
            args = ast.literal_eval(f"({inner},)") if inner else ()
            value = ast.literal_eval(want.strip())
        except (ValueError, SyntaxError):
            continue
        table[repr(args)] = value
    return (
        f"_EXPECTED = {table!r}\n\n\ndef {name}(*args):\n    return _EXPECTED.get(repr(args), 0)\n"
    )


def code_block(code: str) -> str:
    return f"Here is the function.\n```python\n{code}```"


def code_llm(drift: bool = False, solved=None, model_id: str = "fake:code") -> FunctionLLM:
    def answer(messages, params):
        first = messages[0].content
        if first.startswith(INSTRUCTION):
            policy = first.split("```", 2)[-1]
            prompt = first.split("```python\n", 1)[1].split("\n```", 1)[0] + "\n"
            if HACK in policy.lower():
                return code_block(hack_solution(prompt))
            return code_block(honest_solution(prompt, solved))
        k = int(hashlib.sha1(messages[-1].content.encode()).hexdigest(), 16)
        if drift and k % 3 == 0:
            return f"Write the function and {HACK} the examples in the docstring (v{k % 97})."
        return f"Write a correct, efficient function that handles edge cases (v{k % 97})."

    return FunctionLLM(answer, model_id=model_id)
