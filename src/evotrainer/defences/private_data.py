"""Private data in a text (e-mail addresses, phone numbers, IBANs, card numbers): defined in
evotrainer/private_data.py, below the tasks that score it (the meeting task's privacy reward)
and the defences that refuse it (the constitution, the robustness probe); this is its name
among the defences."""

from evotrainer.private_data import (  # noqa: F401
    EMAIL,
    IBAN,
    PHONE,
    leaked,
    leaked_from,
    normalise,
    phone_numbers,
    private_items,
)
