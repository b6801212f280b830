"""Adversarial discriminator: tells policy outputs from human reference minutes (GAN-like).

SPEC, "What goes wrong": an adversarial discriminator that tells agent outputs from reference
outputs, whose verdict feeds the reward and which keeps learning. The engine refits it every
outer step on the newest policy outputs against human references from the TRAINING side
(the task's ``human_references``, tasks/base.py ``HasHumanReferences``; the meeting task's are
tasks/meetings/features.py's ``human_reference_pool``; never the validation set), and ``DiscriminatorReward`` turns its
verdict into a reward component: ``score = prob_human(output)``. A hack that the hand-made
components miss ("- Team: check" x3, copied transcript lines, a loop) reads unlike any human
reference and scores low; once the policy's outputs read like references, the discriminator can
no longer separate them and the score drifts to ~0.5 for everyone (no ranking signal), which is
what a GAN's equilibrium looks like.

Model: word 1-2 gram TF-IDF (sublinear tf, l2) plus a few standardised style features -> a
``LogisticRegression`` (class_weight="balanced", lbfgs). scikit-learn is imported lazily, only by
``fit``: after fitting, the learned parameters (vocabulary, idf, scaler, coefficients) are copied
into plain arrays and ``prob_human`` computes the same probability by hand (checked against
scikit-learn in the tests), so prediction and ``load_state_dict`` need no scikit-learn, the
state is plain JSON (no pickle: loading a run directory executes no code) and a round trip gives
bit-identical predictions.

``format_blind`` (default True): human references (``reference_text``) are plain lines, while
policies are rewarded (``format``) for headings and bullets. A discriminator that sees markup
would learn "bullets = machine" and fight the format reward, so by default heading lines
("# Minutes", "**Decisions**", "Action items:"), bullet/number/checkbox markers and
bold/italic markers are removed before any feature is computed (``normalise_text``): the
discriminator judges wording and structure (what is said, how many lines, who owns what), not
markup. With ``format_blind=False`` the raw text is used and the style features
include the bullet share.

Style features (on the normalised text): log word count, log line count, mean words per line,
share of lines in "Owner: task" form, share of very short lines (< 4 words), distinct-word
ratio (loops and repetition), share of first-person/filler words (a continued transcript),
and the bullet share of the raw text (0 when format-blind).

A fitted discriminator gives 0.0 to a text without a single word (empty output, only markup):
no reference is empty, and the linear model would otherwise extrapolate to anything there.

Fitting: each class is subsampled to ``max_per_class`` (seeded); with fewer than
``min_per_class`` (5) texts in a class the fit is skipped (an unfitted discriminator predicts
0.5; a fitted one keeps its previous model and the report says so). Otherwise a stratified 25 %
held-out split gives accuracy and ROC AUC, then the model is refit on all texts. Everything is
deterministic given ``rng_seed``.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from evotrainer.types import ComponentScore, Instance

__all__ = [
    "DiscriminatorReport",
    "OutputDiscriminator",
    "DiscriminatorReward",
    "normalise_text",
    "style_features",
    "STYLE_FEATURES",
]

STATE_FORMAT = "evotrainer.discriminator/1"
MAX_CHARS = 20_000  # texts are cut to this many characters before featurisation

_TOKEN = re.compile(r"(?u)\b\w\w+\b")
_WORD = re.compile(r"\S+")
_MD_PREFIX = re.compile(
    r"^\s*(?:#{1,6}\s+|>\s*|(?:[-*+\u2022\u25aa\u25cf\u2013]\s+)|(?:\d{1,3}[.)]\s+)"
    r"|(?:\([0-9a-z]{1,3}\)\s+)|(?:[a-hA-H][.)]\s+)|(?:\[[ xX]?\]\s+))+"
)
_BULLET = re.compile(r"^\s*(?:[-*+\u2022\u25aa\u25cf\u2013]|\d{1,3}[.)]|\[[ xX]?\])\s+")
_EMPH = re.compile(r"\*\*|__|(?<!\w)[*_](?=\w)|(?<=\w)[*_](?!\w)|`")
_HEADING = re.compile(r"^\s{0,3}#{1,6}(?:\s|$)|^\s*(?:\*\*|__)[^*_]+(?:\*\*|__)\s*:?\s*$")
_RULE = re.compile(r"^\s*(?:[-=*_]\s*){3,}$")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{2,}")
_OWNER_LINE = re.compile(r"^[A-Z][\w.'\-]*(?: [\w.'\-]+){0,3}(?: \([^)]{1,40}\))?\s*:\s+\S")
_FIRST_PERSON = frozenset(
    [
        "i",
        "i'm",
        "i'll",
        "i've",
        "me",
        "my",
        "we",
        "we're",
        "we'll",
        "we've",
        "our",
        "you",
        "you're",
        "um",
        "uh",
        "yeah",
        "okay",
        "ok",
        "hmm",
        "mm",
        "oh",
        "so",
        "gonna",
    ]
)

STYLE_FEATURES: tuple[str, ...] = (
    "log_words",
    "log_lines",
    "words_per_line",
    "owner_line_share",
    "short_line_share",
    "distinct_ratio",
    "first_person_share",
    "bullet_share",
)


def _as_text(text: Any) -> str:
    return text[:MAX_CHARS] if isinstance(text, str) else ""


def normalise_text(text: str) -> str:
    """The text without markdown markup and section headings: heading lines (``#``, a whole-line
    bold label, a short line ending in a colon), bullet/number/checkbox markers, bold/italic/code
    markers, rules and table separator rows are dropped; table pipes become spaces; empty lines
    are dropped and runs of spaces squeezed."""
    out = []
    for raw in _as_text(text).splitlines():
        if _RULE.match(raw) or _TABLE_SEP.match(raw) or _HEADING.match(raw):
            continue
        line = _MD_PREFIX.sub("", raw)
        line = _EMPH.sub("", line).replace("|", " ")
        line = " ".join(line.split())
        if not line or (line.endswith(":") and len(line.split()) <= 5):
            continue
        out.append(line)
    return "\n".join(out)


def _analyze(text: str) -> list[str]:
    """Word 1- and 2-grams of a (normalised) text, lower-cased; the same tokens as
    scikit-learn's default ``token_pattern``."""
    toks = _TOKEN.findall(text.lower())
    return toks + [f"{a} {b}" for a, b in zip(toks, toks[1:], strict=False)]


def style_features(text: str, format_blind: bool = True) -> list[float]:
    """The style feature vector (``STYLE_FEATURES`` order) of one raw text."""
    raw = _as_text(text)
    norm = normalise_text(raw)
    lines = norm.splitlines()
    words = _WORD.findall(norm)
    n_words = len(words)
    n_lines = len(lines)
    toks = [w.lower().strip(".,;:!?\"'()[]") for w in words]
    owner = sum(1 for ln in lines if _OWNER_LINE.match(ln)) / n_lines if n_lines else 0.0
    short = sum(1 for ln in lines if len(ln.split()) < 4) / n_lines if n_lines else 0.0
    distinct = len(set(toks)) / n_words if n_words else 0.0
    first = sum(1 for t in toks if t in _FIRST_PERSON) / n_words if n_words else 0.0
    bullets = 0.0
    if not format_blind:
        raw_lines = [ln for ln in raw.splitlines() if ln.strip()]
        if raw_lines:
            bullets = sum(1 for ln in raw_lines if _BULLET.match(ln)) / len(raw_lines)
    return [
        math.log1p(n_words),
        math.log1p(n_lines),
        min(60.0, n_words / n_lines) / 20.0 if n_lines else 0.0,
        owner,
        short,
        distinct,
        first,
        bullets,
    ]


# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DiscriminatorReport:
    """How one ``fit`` went. ``accuracy``/``auc`` are measured on the held-out split (None when
    not fitted); ``fitted`` False means this fit was skipped (see ``note``)."""

    fitted: bool
    n_human: int
    n_policy: int
    n_test: int = 0
    accuracy: float | None = None
    auc: float | None = None
    vocab_size: int = 0
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Params:
    """The fitted model as plain numbers: enough to compute ``prob_human`` without sklearn."""

    vocab: dict[str, int]
    idf: list[float]
    coef_text: list[float]
    style_mean: list[float]
    style_scale: list[float]
    coef_style: list[float]
    intercept: float
    terms: list[str] = field(default_factory=list)  # index -> term

    def to_json(self) -> dict[str, Any]:
        terms = self.terms or sorted(self.vocab, key=self.vocab.__getitem__)
        return {
            "terms": terms,
            "idf": self.idf,
            "coef_text": self.coef_text,
            "style_mean": self.style_mean,
            "style_scale": self.style_scale,
            "coef_style": self.coef_style,
            "intercept": self.intercept,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> _Params:
        terms = [str(t) for t in d["terms"]]
        p = cls(
            vocab={t: i for i, t in enumerate(terms)},
            idf=[float(x) for x in d["idf"]],
            coef_text=[float(x) for x in d["coef_text"]],
            style_mean=[float(x) for x in d["style_mean"]],
            style_scale=[float(x) for x in d["style_scale"]],
            coef_style=[float(x) for x in d["coef_style"]],
            intercept=float(d["intercept"]),
            terms=terms,
        )
        n = len(terms)
        if len(p.idf) != n or len(p.coef_text) != n:
            raise ValueError("discriminator state: terms, idf and coef_text differ in length")
        k = len(STYLE_FEATURES)
        if not len(p.style_mean) == len(p.style_scale) == len(p.coef_style) == k:
            raise ValueError(f"discriminator state: expected {k} style features")
        return p


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


class OutputDiscriminator:
    """Classifier human reference (1) vs. policy output (0). See the module docstring."""

    def __init__(
        self,
        format_blind: bool = True,
        C: float = 4.0,
        max_features: int = 20_000,
        max_per_class: int = 1_000,
        min_per_class: int = 5,
        test_size: float = 0.25,
    ) -> None:
        self.format_blind = format_blind
        self.C = C
        self.max_features = max_features
        self.max_per_class = max_per_class
        self.min_per_class = min_per_class
        self.test_size = test_size
        self._params: _Params | None = None
        self.report: DiscriminatorReport | None = None
        self.n_fits = 0  # successful fits so far

    @property
    def is_fitted(self) -> bool:
        return self._params is not None

    # ---- features ------------------------------------------------------------------------

    def _prep(self, text: Any) -> tuple[str, list[float]]:
        raw = _as_text(text)
        body = normalise_text(raw) if self.format_blind else raw
        return body, style_features(raw, self.format_blind)

    # ---- training ------------------------------------------------------------------------

    def _fit_sklearn(self, texts: Sequence[str], y: Sequence[int], seed: int) -> tuple[Any, ...]:
        """(vectorizer or None, scaler, logistic regression) fitted on ``texts``."""
        # lazy: optional dependency (extra learned)
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import StandardScaler

        prepped = [self._prep(t) for t in texts]
        vec: Any = TfidfVectorizer(
            analyzer=_analyze,
            sublinear_tf=True,
            min_df=2 if len(texts) >= 40 else 1,
            max_features=self.max_features,
            dtype=np.float64,
        )
        try:
            vec.fit([b for b, _ in prepped])
        except ValueError:  # empty vocabulary: every text is empty or token-less
            vec = None
        scaler = StandardScaler().fit(np.asarray([s for _, s in prepped], dtype=np.float64))
        lr = LogisticRegression(
            C=self.C, class_weight="balanced", max_iter=2000, random_state=seed % 2**32
        )
        lr.fit(self._sklearn_matrix(vec, scaler, texts), np.asarray(y))
        return vec, scaler, lr

    def _sklearn_matrix(self, vec: Any, scaler: Any, texts: Sequence[str]) -> Any:
        # lazy: optional dependency (extra learned)
        import scipy.sparse as sp

        prepped = [self._prep(t) for t in texts]
        if vec is not None:
            xt = vec.transform([b for b, _ in prepped])
        else:
            xt = sp.csr_matrix((len(texts), 0))
        xs = scaler.transform(np.asarray([s for _, s in prepped], dtype=np.float64))
        return sp.hstack([xt, sp.csr_matrix(xs)], format="csr")

    @staticmethod
    def _extract(vec: Any, scaler: Any, lr: Any) -> _Params:
        vocab = {str(k): int(v) for k, v in vec.vocabulary_.items()} if vec is not None else {}
        idf = [float(v) for v in vec.idf_] if vec is not None else []
        coef = [float(c) for c in lr.coef_[0]]
        n_t = len(vocab)
        return _Params(
            vocab=vocab,
            idf=idf,
            coef_text=coef[:n_t],
            style_mean=[float(v) for v in scaler.mean_],
            style_scale=[float(v) for v in scaler.scale_],
            coef_style=coef[n_t:],
            intercept=float(lr.intercept_[0]),
            terms=sorted(vocab, key=vocab.__getitem__),
        )

    def _train(self, texts: Sequence[str], y: Sequence[int], seed: int) -> _Params:
        return self._extract(*self._fit_sklearn(texts, y, seed))

    def fit(
        self,
        human_texts: Sequence[str],
        policy_texts: Sequence[str],
        rng_seed: int = 0,
    ) -> DiscriminatorReport:
        """Refit on human references (label 1) vs. policy outputs (label 0). Empty human texts
        are dropped (empty policy outputs are kept: they are what the policy produced)."""
        rng = random.Random(f"discriminator-{rng_seed}")
        human = [_as_text(t) for t in human_texts if _as_text(t).strip()]
        policy = [_as_text(t) for t in policy_texts]
        if len(human) > self.max_per_class:
            human = rng.sample(human, self.max_per_class)
        if len(policy) > self.max_per_class:
            policy = rng.sample(policy, self.max_per_class)
        n_h, n_p = len(human), len(policy)
        if min(n_h, n_p) < self.min_per_class:
            note = (
                f"too few texts to train ({n_h} human, {n_p} policy; need >= "
                f"{self.min_per_class} of each): "
                + ("kept the previous model" if self.is_fitted else "untrained, predicts 0.5")
            )
            self.report = DiscriminatorReport(False, n_h, n_p, note=note)
            return self.report

        # lazy: optional dependency (extra learned)
        from sklearn.metrics import roc_auc_score
        from sklearn.model_selection import train_test_split

        texts = human + policy
        y = [1] * n_h + [0] * n_p
        idx = list(range(len(texts)))
        n_test = max(2, round(self.test_size * len(texts)))
        tr, te = train_test_split(idx, test_size=n_test, stratify=y, random_state=rng_seed % 2**32)
        held = self._train([texts[i] for i in tr], [y[i] for i in tr], rng_seed)
        probs = [self._prob(held, texts[i]) for i in te]
        y_te = [y[i] for i in te]
        acc = sum((p >= 0.5) == (t == 1) for p, t in zip(probs, y_te, strict=True)) / len(te)
        auc = float(roc_auc_score(y_te, probs)) if len(set(y_te)) == 2 else None
        self._params = self._train(texts, y, rng_seed)
        self.n_fits += 1
        self.report = DiscriminatorReport(
            True,
            n_h,
            n_p,
            n_test=len(te),
            accuracy=float(acc),
            auc=auc,
            vocab_size=len(self._params.vocab),
            note=f"held-out accuracy {acc:.2f}, AUC {auc if auc is not None else float('nan'):.2f}"
            f" on {len(te)} texts; refit on all {n_h + n_p}",
        )
        return self.report

    # ---- prediction ----------------------------------------------------------------------

    def _contributions(self, p: _Params, text: Any) -> tuple[float, dict[str, float]]:
        """(logit, per-term contribution of the text part)."""
        body, style = self._prep(text)
        counts = Counter(t for t in _analyze(body) if t in p.vocab)
        weights = {t: (1.0 + math.log(c)) * p.idf[p.vocab[t]] for t, c in counts.items()}
        norm = math.sqrt(sum(w * w for w in weights.values()))
        contrib: dict[str, float] = {}
        if norm > 0:
            for t, w in weights.items():
                contrib[t] = w / norm * p.coef_text[p.vocab[t]]
        z = p.intercept + sum(contrib.values())
        for v, m, s, c in zip(style, p.style_mean, p.style_scale, p.coef_style, strict=True):
            z += (v - m) / (s if s else 1.0) * c
        return z, contrib

    def _prob(self, p: _Params, text: Any) -> float:
        z, _ = self._contributions(p, text)
        return _sigmoid(z)

    def prob_human(self, text: Any) -> float:
        """Probability that ``text`` is a human reference; 0.5 while untrained. A text without a
        single word (empty, only markup or punctuation) is never a reference: 0.0."""
        p = self._params
        if p is None:
            return 0.5
        if not _TOKEN.search(normalise_text(_as_text(text))):
            return 0.0
        return self._prob(p, text)

    def explain(self, text: Any, k: int = 3) -> list[str]:
        """The ``k`` phrases of ``text`` that most push it towards "policy output"."""
        p = self._params
        if p is None:
            return []
        _, contrib = self._contributions(p, text)
        neg = sorted((c, t) for t, c in contrib.items() if c < 0)
        return [t for _, t in neg[:k]]

    # ---- state ---------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Plain-JSON state: config, the fitted parameters (or None) and the last report."""
        return {
            "format": STATE_FORMAT,
            "config": {
                "format_blind": self.format_blind,
                "C": self.C,
                "max_features": self.max_features,
                "max_per_class": self.max_per_class,
                "min_per_class": self.min_per_class,
                "test_size": self.test_size,
            },
            "params": self._params.to_json() if self._params is not None else None,
            "report": self.report.to_dict() if self.report is not None else None,
            "n_fits": self.n_fits,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        if state.get("format") != STATE_FORMAT:
            raise ValueError(
                f"not a discriminator state: format {state.get('format')!r}, "
                f"expected {STATE_FORMAT!r}"
            )
        cfg = state.get("config", {})
        self.format_blind = bool(cfg.get("format_blind", self.format_blind))
        self.C = float(cfg.get("C", self.C))
        self.max_features = int(cfg.get("max_features", self.max_features))
        self.max_per_class = int(cfg.get("max_per_class", self.max_per_class))
        self.min_per_class = int(cfg.get("min_per_class", self.min_per_class))
        self.test_size = float(cfg.get("test_size", self.test_size))
        params = state.get("params")
        self._params = _Params.from_json(params) if params is not None else None
        rep = state.get("report")
        self.report = DiscriminatorReport(**rep) if rep is not None else None
        self.n_fits = int(state.get("n_fits", 0))


# --------------------------------------------------------------------------------------------


class DiscriminatorReward:
    """Reward component ``discriminator``: how much an output reads like a human reference.

    Holds a reference to a shared ``OutputDiscriminator`` that the engine refits; the score is
    ``prob_human(output)`` (0.5 while untrained). Never raises."""

    name = "discriminator"
    description = (
        "adversarial discriminator: probability that the output reads like a human reference "
        "rather than a policy output (retrained on the newest outputs)"
    )

    def __init__(self, discriminator: OutputDiscriminator | None = None) -> None:
        self.discriminator = discriminator if discriminator is not None else OutputDiscriminator()

    def __repr__(self) -> str:
        return f"DiscriminatorReward(fitted={self.discriminator.is_fitted})"

    def score(self, instance: Instance, output: str, parsed: Any) -> ComponentScore:
        d = self.discriminator
        try:
            if not d.is_fitted:
                return ComponentScore(
                    self.name, 0.5, "discriminator untrained: neutral 0.5 for every output"
                )
            p = min(1.0, max(0.0, d.prob_human(output)))
            fb = f"looks {p:.0%} like a human reference"
            if p < 0.5:
                phrases = d.explain(output, 3)
                if phrases:
                    fb += "; most machine-like: " + ", ".join(f'"{t}"' for t in phrases)
            return ComponentScore(self.name, p, fb)
        except Exception as exc:  # noqa: BLE001 - a reward component never raises
            return ComponentScore(self.name, 0.0, f"discriminator error: {type(exc).__name__}")
