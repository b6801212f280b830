"""EvoTrainer's quick start, in the shape of DSPy's: examples in memory, a metric function,
``compile``, call the result on a new input, save it and load it back.

    python examples/quickstart.py                        # the embedded model (evotrainer[local])
    python examples/quickstart.py --model fake:minutes   # no model: a fake that writes minutes
    python examples/quickstart.py --model openai:NAME --base-url http://localhost:8000/v1

With ``fake:minutes`` it runs in seconds (CI runs it: tests/test_api_quickstart.py); on the
embedded model, about 120 LLM calls (the run logs its estimate first). docs/api.md walks
through it.
"""

from __future__ import annotations

import argparse
import logging
import tempfile
from pathlib import Path

import evotrainer

# 1. Examples: plain dicts of the meeting task's fields (docs/data.md). A transcript is a list
#    of {"speaker", "text"} turns or one text of "Speaker: text" lines; "references" holds what
#    a person wrote: "minutes" (free text) and, where there are some, "action_items" as
#    "Owner: task" lines. Ids are made when missing. A pandas DataFrame or a Hugging Face
#    Dataset with these columns works the same.
TRAINSET = [
    {
        "transcript": "Anna: The venue for the offsite is booked for the 12th.\n"
        "Ben: Good. Catering is still open, I can get three quotes.\n"
        "Anna: Please do. Carla, can you draft the agenda?\n"
        "Carla: Yes, by Friday. We agreed on two workshop sessions.",
        "references": {
            "minutes": "Offsite venue booked for the 12th. Two workshop sessions agreed.",
            "action_items": ["Ben: get three catering quotes", "Carla: draft the agenda"],
        },
    },
    {
        "transcript": "Dev: The login bug is fixed on staging.\n"
        "Eva: Then we release on Monday, as decided last week.\n"
        "Dev: I will write the release notes.\n"
        "Eva: And I will tell support about the change.",
        "references": {
            "minutes": "Login bug fixed on staging. Release on Monday confirmed.",
            "action_items": ["Dev: write the release notes", "Eva: inform support"],
        },
    },
    {
        "transcript": "Farid: Sales were up eight percent this quarter.\n"
        "Gina: The north region lagged. We decided to review its pricing.\n"
        "Farid: I can pull the regional numbers.\n"
        "Gina: Thanks. Hugo will set up the pricing review.",
        "references": {
            "minutes": "Sales up 8% this quarter; north region lagging, pricing to be reviewed.",
            "action_items": ["Farid: pull the regional numbers", "Hugo: set up pricing review"],
        },
    },
    {
        "transcript": "Ines: The new laptops arrive next week.\n"
        "Jon: We agreed to image them before handing them out.\n"
        "Ines: Jon, you do the imaging. I will book the handover slots.",
        "references": {
            "minutes": "New laptops next week; they are imaged before the handover.",
            "action_items": ["Jon: image the laptops", "Ines: book handover slots"],
        },
    },
]
VALSET = [
    {
        "transcript": "Kim: The survey closed with 140 answers.\n"
        "Leo: Most people want flexible hours. We decided to pilot it in March.\n"
        "Kim: I will write the pilot plan. Leo, tell the team leads.",
        "references": {
            "minutes": "Survey: 140 answers, most want flexible hours. Pilot in March.",
            "action_items": ["Kim: write the pilot plan", "Leo: inform the team leads"],
        },
    },
    {
        "transcript": "Mia: The supplier raised prices by five percent.\n"
        "Nils: We agreed to ask two other suppliers for offers.\n"
        "Mia: I will contact them this week. Nils checks the contract terms.",
        "references": {
            "minutes": "Supplier raised prices 5%; two other suppliers will be asked.",
            "action_items": ["Mia: contact two suppliers", "Nils: check the contract terms"],
        },
    },
    {
        "transcript": "Omar: The website redesign is two weeks late.\n"
        "Pia: We decided to drop the blog section from the first release.\n"
        "Omar: I will update the plan. Pia informs marketing.",
        "references": {
            "minutes": "Redesign two weeks late; blog dropped from the first release.",
            "action_items": ["Omar: update the plan", "Pia: inform marketing"],
        },
    },
    {
        "transcript": "Quinn: The audit found two missing invoices.\n"
        "Rosa: I will find them in the archive.\n"
        "Quinn: We agreed to scan all invoices from now on. Sam sets up the scanner.",
        "references": {
            "minutes": "Audit: two invoices missing. All invoices will be scanned from now on.",
            "action_items": ["Rosa: find the missing invoices", "Sam: set up the scanner"],
        },
    },
]
NEW_TRANSCRIPT = (
    "Tara: The client approved the design.\n"
    "Uwe: Great. We agreed to start the build on Tuesday.\n"
    "Tara: I will send the contract. Uwe books the developers."
)


# 2. A metric: your score of one answer in [0, 1], with feedback text that reflective
#    mutation reads (a bare number works too).
def owners_named(example: dict, answer: str) -> tuple[float, str]:
    items = example["references"]["action_items"]
    owners = [item.split(":")[0].strip() for item in items]
    missing = [o for o in owners if o.lower() not in answer.lower()]
    score = 1 - len(missing) / len(owners)
    feedback = f"the minutes name no task for {', '.join(missing)}" if missing else "every owner"
    return score, feedback


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="local:smollm2", help="a model spec, as on the CLI")
    ap.add_argument("--base-url", default=None, help="the endpoint of an openai: model")
    ap.add_argument("--max-calls", type=int, default=120, help="the LLM call budget")
    ap.add_argument("--out", type=Path, default=None, help="a folder for the run and policy")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")  # the run's progress
    out = args.out or Path(tempfile.mkdtemp(prefix="evotrainer-quickstart-"))

    # 3. Compile: evolve the meeting task's seed prompts on the examples.
    optimizer = evotrainer.Optimizer(
        metric=owners_named,
        model=args.model,
        base_url=args.base_url,
        max_calls=args.max_calls,
        run_dir=out / "run",
        validation__confirm=2,  # any config key, "__" for its dots
    )
    policy = optimizer.compile(trainset=TRAINSET, valset=VALSET)
    print("policy:", policy)
    print("summary:", policy.summary)

    # 4. Call it on a new transcript.
    answer = policy(NEW_TRANSCRIPT)
    print("answer:\n" + answer)

    # 5. Save and load.
    path = policy.save(out / "policy.json")
    loaded = evotrainer.Policy.load(path)
    assert loaded == policy
    assert loaded(NEW_TRANSCRIPT) == answer
    print(f"saved to {path} and loaded back: the same policy, the same answer")


if __name__ == "__main__":
    main()
