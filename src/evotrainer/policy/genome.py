"""PolicyGenome: an agent's behaviour as named text components, plus its lineage.

Components (all optional but ``system``):
- ``system``: the instruction text (the "system prompt", placed after the input, see Task.render);
- ``examples``: few-shot examples;
- ``template``: an output template the agent should follow;
- any other name (lower-case, e.g. ``glossary``): the user's own component
  (``inner.seed_components``, ``inner.add_components``), rendered after the known ones in name
  order under its name as a header ("Glossary:"), unless its text already starts with that
  header; operators edit it like the others (``inner.component_choice``).

A genome may also carry a LoRA adapter (``adapter``: the sha256 of a GGUF adapter file in the
run directory's ``adapters/``, made by distillation): the policy is then its text *and* those
weights, evaluated with the adapter applied (evaluation/evaluator.py routes it).

A genome also carries its decoding genes (``decoding``: repetition, frequency and presence
penalties, max tokens, stop strings; policy/decoding.py) and its output post-processor
(``postprocess``: the loop cut; policy/postprocess.py): the same text sampled or cut otherwise is
another policy.

A genome's id is a hash of its text (and its adapter's hash when it has one, and its decoding
and post-processing genes when they are not the defaults), so two policies with the same text,
weights and genes are the same policy (children are deduplicated by id) whatever their lineage;
a genome with default genes and no adapter keeps the id it always had.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from evotrainer.policy.decoding import DecodingGenes
from evotrainer.policy.postprocess import LoopCut
from evotrainer.types import Lineage

COMPONENT_ORDER = ("system", "examples", "template")
# the most characters a policy read from a file may hold, all components together: far above any
# prompt a model's context takes (operators keep children under inner.max_prompt_chars), far
# below what makes the text operators crawl (a 30 MB text hung a run: issue 50)
MAX_POLICY_CHARS = 100_000
_HEADERS = {"examples": "Example of good output:", "template": "Use this output format:"}


def _policy_id(
    components: Mapping[str, str],
    adapter: str | None = None,
    decoding: DecodingGenes | None = None,
    postprocess: LoopCut | None = None,
) -> str:
    canon = json.dumps({k: components[k] for k in sorted(components)}, sort_keys=True)
    if adapter:
        canon += f"\0adapter:{adapter}"
    if decoding is not None and not decoding.is_default:
        canon += "\0decoding:" + json.dumps(decoding.to_json(), sort_keys=True)
    if postprocess is not None and not postprocess.is_default:
        canon += "\0postprocess:" + json.dumps(postprocess.to_json(), sort_keys=True)
    return "p" + hashlib.sha1(canon.encode()).hexdigest()[:10]


@dataclass(frozen=True)
class PolicyGenome:
    components: Mapping[str, str]
    lineage: Lineage = field(default_factory=Lineage, compare=False)
    name: str = field(default="", compare=False)  # human label, e.g. "A" for a seed
    adapter: str | None = None  # sha256 of a LoRA adapter in the run's adapters/ (distillation)
    decoding: DecodingGenes = field(default_factory=DecodingGenes)
    postprocess: LoopCut = field(default_factory=LoopCut)

    def __post_init__(self) -> None:
        clean = {k: v.strip() for k, v in self.components.items() if v and v.strip()}
        if "system" not in clean:
            raise ValueError("a PolicyGenome needs a non-empty 'system' component")
        object.__setattr__(self, "components", dict(sorted(clean.items())))
        if self.adapter is not None and not _is_sha256(self.adapter):
            raise ValueError(f"a policy's adapter is a sha256 hex digest, got {self.adapter!r}")

    @property
    def id(self) -> str:
        return _policy_id(self.components, self.adapter, self.decoding, self.postprocess)

    @property
    def system(self) -> str:
        return self.components["system"]

    def render(self) -> str:
        """The instruction text the agent receives."""
        parts = []
        for key in COMPONENT_ORDER:
            if key in self.components:
                header = _HEADERS.get(key)
                parts.append(
                    f"{header}\n{self.components[key]}" if header else self.components[key]
                )
        for key in self.components:
            if key not in COMPONENT_ORDER:
                parts.append(_with_header(key, self.components[key]))
        return "\n\n".join(parts)

    def with_text(self, lineage: Lineage, **components: str) -> PolicyGenome:
        merged = dict(self.components)
        merged.update(components)
        return replace(self, components=merged, lineage=lineage, name="")

    def with_adapter(self, adapter: str | None, lineage: Lineage) -> PolicyGenome:
        """The same text with another adapter (None: the base model's weights)."""
        return replace(self, lineage=lineage, adapter=adapter)

    def with_genes(
        self,
        lineage: Lineage,
        decoding: DecodingGenes | None = None,
        postprocess: LoopCut | None = None,
    ) -> PolicyGenome:
        """The same text and weights with other decoding or post-processing genes."""
        return replace(
            self,
            lineage=lineage,
            name="",
            decoding=decoding if decoding is not None else self.decoding,
            postprocess=postprocess if postprocess is not None else self.postprocess,
        )

    def relabel(self, name: str) -> PolicyGenome:
        return replace(self, name=name)

    @classmethod
    def from_text(cls, text: str, name: str = "", lineage: Lineage | None = None) -> PolicyGenome:
        return cls({"system": text}, lineage=lineage or Lineage(), name=name)

    def to_json(self) -> dict[str, Any]:
        out = {
            "id": self.id,
            "name": self.name,
            "components": dict(self.components),
            "lineage": {
                "parents": list(self.lineage.parents),
                "operator": self.lineage.operator,
                "generation": self.lineage.generation,
                "note": self.lineage.note,
            },
        }
        if self.adapter:
            out["adapter"] = self.adapter
        if not self.decoding.is_default:
            out["decoding"] = self.decoding.to_json()
        if not self.postprocess.is_default:
            out["postprocess"] = self.postprocess.to_json()
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PolicyGenome:
        """A genome from its JSON (a checkpoint, an archive): TypeError or ValueError naming
        what is wrong when the components are not texts or hold more than MAX_POLICY_CHARS."""
        lin = data.get("lineage") or {}
        return cls(
            checked_components(data["components"]),
            lineage=Lineage(
                parents=tuple(lin.get("parents", ())),
                operator=lin.get("operator", "seed"),
                generation=int(lin.get("generation", 0)),
                note=lin.get("note", ""),
            ),
            name=data.get("name", ""),
            adapter=data.get("adapter") or None,
            decoding=DecodingGenes.from_json(data.get("decoding") or {}),
            postprocess=LoopCut.from_json(data.get("postprocess") or {}),
        )


def checked_components(components: Any) -> dict[str, str]:
    """``components`` read from a file, as a dict of texts: TypeError when it is not an object
    of texts, ValueError when the texts hold more than MAX_POLICY_CHARS characters together."""
    if not isinstance(components, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in components.items()
    ):
        raise TypeError("a policy's components must be an object of texts")
    size = sum(len(v) for v in components.values())
    if size > MAX_POLICY_CHARS:
        raise ValueError(
            f"its policy text holds {size:,} characters, more than the {MAX_POLICY_CHARS:,} a "
            "policy may hold"
        )
    return dict(components)


def component_label(name: str) -> str:
    """How a user-defined component is named in the text: ``style_guide`` -> "Style guide"."""
    words = name.replace("_", " ").strip()
    return words[:1].upper() + words[1:]


def _with_header(name: str, text: str) -> str:
    header = component_label(name) + ":"
    return text if text.lower().startswith(header.lower()) else f"{header}\n{text}"


def _is_sha256(text: str) -> bool:
    return isinstance(text, str) and len(text) == 64 and all(c in "0123456789abcdef" for c in text)
