"""The run config's optional services (config/run.py gathers the sections): the fitness
surrogate, Ray, distillation into a student model and experiment tracking."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from evotrainer.config.base import StrictModel as _Strict


class SurrogateConfig(_Strict):
    enabled: bool = Field(
        False,
        description="screen children with a surrogate of fitness before any LLM call "
        "(evaluation/surrogate.py); screened children keep the prediction as their fitness",
    )
    min_train: int = Field(12, ge=2, description="children evaluated before it may screen")
    min_spearman: float = Field(
        0.2,
        ge=-1,
        le=1,
        description="it screens only while its held-out rank correlation is at least this",
    )
    margin: float = Field(
        0.02, ge=0, description="screen a child predicted below the elites' cut-off by more"
    )
    explore: float = Field(
        0.25,
        ge=0,
        le=1,
        description="share of the children it would screen that are evaluated anyway "
        "(calibration on real inference)",
    )
    window: int = Field(200, ge=10, description="it learns from the last N evaluated children")


class RayConfig(_Strict):
    address: str | None = Field(
        None,
        description="ray.init(address=...) for runner ray: 'auto' or ray://head:10001 of an "
        "existing cluster; None = $RAY_ADDRESS, else a local Ray instance for the run",
    )
    workers: int = Field(
        2, ge=1, description="backend workers (Ray actors), each with its own backend"
    )
    num_cpus: float = Field(1.0, ge=0, description="CPUs each worker reserves")
    num_gpus: float = Field(0.0, ge=0, description="GPUs each worker reserves")
    spread: bool = Field(
        True, description="place the workers on as many nodes as possible (SPREAD scheduling)"
    )
    runtime_env: dict[str, Any] | None = Field(
        None, description="ray.init runtime_env, e.g. {pip: [evotrainer]} for a cluster"
    )


class DistillConfig(_Strict):
    """Distillation (docs/distillation.md): what evolution found is trained into a LoRA adapter
    that the population then carries; prompts evolve on, on the new weights."""

    enabled: bool = Field(
        False,
        description="distil the best policies' answers into a LoRA adapter (needs pip install "
        "'evotrainer[distill]' and the embedded model)",
    )
    after: int = Field(3, ge=1, description="inner generations of prompt evolution first")
    every: int = Field(0, ge=0, description="generations between further distillations (0 = once)")
    max_rounds: int = Field(1, ge=1, description="distillations in a run at most")
    top_policies: int = Field(
        3, ge=1, description="the best policies (by fitness) whose answers are candidate pairs"
    )
    keep_share: float = Field(
        0.5,
        gt=0,
        le=1,
        description="of the candidates (the best-rewarded answer per training instance), the "
        "share kept: those the current harness's reward ranks highest among the answers scored "
        "on the same reward components (reward-filtered self-training)",
    )
    fresh_instances: int = Field(
        8,
        ge=0,
        description="further training instances the best policy answers for distillation "
        "(backend calls), so the adapter sees more than the few batches evolution used",
    )
    min_pairs: int = Field(8, ge=1, description="fewer kept pairs: no adapter this round")
    max_pairs: int = Field(64, ge=1, description="the most pairs one adapter is trained on")
    validate_top: int = Field(
        3, ge=1, description="the best adapter policies validated to decide whether it is kept"
    )
    rank: int = Field(8, ge=1, description="LoRA rank")
    alpha: float = Field(16.0, gt=0, description="LoRA alpha (scale alpha / rank)")
    learning_rate: float = Field(2e-4, gt=0, description="AdamW learning rate")
    epochs: float = Field(2.0, gt=0, description="passes over the pairs")
    max_seq_len: int = Field(
        1536,
        ge=64,
        description="tokens of one pair (prompt + answer); longer ones are cut (a 1,024-token "
        "transcript, the instructions and a 256-token answer need about 1,500)",
    )
    threads: int | None = Field(
        None, ge=1, description="torch CPU threads while training; None = the free cores"
    )
    cache_dir: str | None = Field(
        None,
        description="a folder of trained adapters keyed by everything a training reads (its "
        "pairs, settings and thread count, base model, starting weights, code and library "
        "versions): an identical training is read back from it instead of run (training is "
        "deterministic given these), and the distillation's record says cache: reused. None: "
        "no cache",
    )
    schedule: Literal["prompts_first", "weights_first"] = Field(
        "prompts_first",
        description="prompts_first: the first distillation after distill.after generations; "
        "weights_first: an adapter trained on the human references before generation 1 (as "
        "SFT), prompt evolution on those weights, then distillations every distill.every "
        "generations after distill.after (issue 47)",
    )
    mix_genes: bool = Field(
        False,
        description="the data mix as harness genes (distill_refs, distill_own, "
        "distill_context, distill_samples, distill_epochs, distill_warm_start; "
        "harness/distill_mix.py): with the outer loop on, each outer-step trial trains a small "
        "adapter under its variant's mix, starting from the weights its population carries, "
        "and is judged on s_val",
    )
    trial_pairs: int = Field(
        16, ge=1, description="the pairs of an outer-step trial's small adapter (mix_genes)"
    )
    sample_temperature: float = Field(
        0.8,
        gt=0,
        le=2,
        description="the temperature of the rejection samples (gene distill_samples): an answer "
        "is kept only when the harness's reward puts it above the greedy answer",
    )
    cut_targets: bool = Field(
        False,
        description="cut a human reference longer than model.max_tokens at a sentence boundary "
        "before training, so the distilled model learns to stop within the answer cap",
    )
    reference_targets: Literal["answer", "text"] = Field(
        "answer",
        description="what a distillation trains on as a human reference: answer, the reference "
        "written as the answer the task asks for (meetings: a summary, the decisions and the "
        "action items as a list; with cut_targets its prose is shortened first, so the items "
        "stay), or text, the validation metric's reference text as it is (its action items are "
        "plain sentences the parser does not read as items; the behaviour before 2026-12-07)",
    )

    def due_after(self, generation: int, rounds_done: int) -> bool:
        """Whether a distillation round follows ``generation`` when ``rounds_done`` rounds
        have run: the first after ``after`` generations, then every ``every`` more, at most
        ``max_rounds`` in all (the engine's schedule and the call estimate's)."""
        if not self.enabled or rounds_done >= self.max_rounds or generation < self.after:
            return False
        if generation == self.after:
            return True
        return bool(self.every) and (generation - self.after) % self.every == 0


class TrackingConfig(_Strict):
    """An experiment tracker that follows the run's events (run/tracking.py): the config, each
    generation's and outer step's metrics, the harness genes, and at the end the report, the
    best policy and the summary. ``tracking: mlflow`` is short for ``{kind: mlflow}``."""

    kind: Literal["none", "mlflow", "tensorboard"] = Field(
        "none",
        description="none | mlflow (pip install 'evotrainer[mlflow]') | tensorboard (pip "
        "install 'evotrainer[tensorboard]')",
    )
    uri: str | None = Field(
        None,
        description="mlflow: the tracking URI (http://host:5000, or a local folder file:/folder: "
        "the run sets MLFLOW_ALLOW_FILE_STORE=true for it, which MLflow 3 needs; set it "
        "yourself to read the folder back); None = MLflow's own default "
        "($MLFLOW_TRACKING_URI). tensorboard: the log folder; None = RUN_DIR/tensorboard",
    )
    experiment: str = Field("evotrainer", min_length=1, description="mlflow experiment name")
    run_name: str | None = Field(None, description="tracked run's name; None = the run folder's")
    artifacts: bool = Field(
        True,
        description="at the end, log the report, best/ (prompt, policy, validation) and "
        "summary.json (tensorboard: copied to LOGDIR/artifacts) and the policy as text",
    )

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        return {"kind": data} if isinstance(data, str) else data
