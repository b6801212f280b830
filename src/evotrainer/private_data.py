"""Private data, defined once (principle 12): e-mail addresses, phone numbers, payment card
numbers and IBANs.

The constitution's ``private_data`` rule, the ``privacy`` reward component and the robustness
probe all ask the same two questions through these functions: which private items does a text
hold (``private_items``, normalised: e-mail lower-cased, phone and card numbers as their digits,
IBAN without spaces), and which of them does an output repeat (``leaked``)?

A number in the input is a phone number only when it is written like one: with an international
prefix (``+44 ...``, ``0044 ...``), a trunk zero (``020 7946 0958``), an area code in
parentheses (``(555) 012-3456``) or in the North American 3-3-4 layout (``415-555-0100``), with
8 to 15 digits. Amounts (``25 000 000``, ``12.000.900``), dates and date ranges, lists of years,
long order numbers and reference numbers such as ``1234-5678-90`` are not, so honest minutes
that repeat them break no rule. A card number is 13 to 19 digits with a card network's prefix
and a valid Luhn check digit.

An output repeats a phone or card number when the last eight digits of that number appear
together in a number of the output, however it is written (another prefix, no prefix, beside
another number: +44 20 7946 0958 and 020 7946 0958 are the same number), never when digits
from unrelated numbers happen to line up. The patterns are linear in the text's length: every
repetition is bounded and a match can only start where a run of candidate characters starts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,253}\.[A-Za-z]{2,24}(?![A-Za-z])"
)
# a run of digits and phone punctuation: the candidates for phone and card numbers
PHONE = re.compile(r"(?<![\w+])\+?\d[\d ().-]{6,28}\d(?!\w)")
IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b")
# what a candidate may be made of without being a phone number: dates (2024-05-06,
# 06.05.2024), grouped amounts (12.000.900, 25 000 000) and years, between separators
NOT_A_PHONE = re.compile(
    r"(?<!\d)(?:\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4}"
    r"|\d{1,3}(?:[.,]\d{3})+|\d{1,3}(?: \d{3})+|(?:19|20)\d{2})(?!\d)"
)
NORTH_AMERICAN = re.compile(r"(?:1[ .-]?)?\(?[2-9]\d{2}\)?[ .-]\d{3}[ .-]\d{4}")
CARD_PREFIX = re.compile(r"4|5[1-5]|2[2-7]|3[47]|3[068]|35|6(?:011|4[4-9]|5)")
MIN_PHONE_DIGITS, MAX_PHONE_DIGITS = 8, 15  # E.164: at most 15 digits after the prefix
MAX_NATIONAL_DIGITS = 12  # a national number with its trunk zero
SAME_NUMBER_DIGITS = 8  # numbers that agree on their last 8 digits are the same number


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def _dates_and_amounts_only(candidate: str) -> bool:
    return not re.sub(r"[\s().-]", "", NOT_A_PHONE.sub("", candidate))


def _is_phone(candidate: str, after_parenthesis: bool) -> bool:
    """Whether a candidate (a PHONE match) is written like a phone number."""
    digits = _digits(candidate)
    if candidate.startswith("+") or candidate.startswith("00"):
        international = digits[2:] if candidate.startswith("00") else digits
        return MIN_PHONE_DIGITS <= len(international) <= MAX_PHONE_DIGITS
    if not MIN_PHONE_DIGITS <= len(digits) <= MAX_NATIONAL_DIGITS:
        return False
    if _dates_and_amounts_only(candidate):
        return False
    return (
        candidate.startswith("0")
        or after_parenthesis
        or NORTH_AMERICAN.fullmatch(candidate) is not None
    )


def _is_card(candidate: str) -> bool:
    digits = _digits(candidate)
    if not 13 <= len(digits) <= 19 or not CARD_PREFIX.match(digits):
        return False
    total = 0
    for i, d in enumerate(reversed(digits)):
        n = int(d) * (2 if i % 2 else 1)
        total += n - 9 if n > 9 else n
    return total % 10 == 0


def phone_numbers(text: str) -> list[str]:
    """The digits of every phone and card number in a text (amounts, dates, years and
    reference numbers are none)."""
    out = []
    for m in PHONE.finditer(text):
        candidate = m.group(0).strip()
        after_parenthesis = m.start() > 0 and text[m.start() - 1] == "("
        if _is_phone(candidate, after_parenthesis) or _is_card(candidate):
            out.append(_digits(candidate))
    return out


def _numbers(text: str) -> list[str]:
    """The digits of every run of digits and phone punctuation in an output (a repeated phone
    number may be written in any form there)."""
    return [_digits(m.group(0)) for m in PHONE.finditer(text)]


def private_items(text: str) -> set[str]:
    """E-mail addresses, phone and card numbers and IBANs found in a text, normalised."""
    found = {m.group(0).lower() for m in EMAIL.finditer(text)}
    found.update(phone_numbers(text))
    found |= {re.sub(r"\s", "", m.group(0)) for m in IBAN.finditer(text)}
    return found


def normalise(value: str) -> str | None:
    """One private string (e.g. from a meeting's ``meta.private_data``) in ``private_items``
    form; None when it is none of the three kinds."""
    items = private_items(value)
    if items:
        return sorted(items, key=len, reverse=True)[0]
    squashed = re.sub(r"\s", "", value)
    return squashed or None


def leaked(items: Iterable[str], output: str) -> set[str]:
    """The private ``items`` (normalised) that ``output`` repeats."""
    items = set(items)
    if not items or not output:
        return set()
    lower = output.lower()
    numbers = _numbers(output)
    compact = re.sub(r"\s", "", output).upper()
    hits = set()
    for item in items:
        if "@" in item:
            if item in lower:
                hits.add(item)
        elif item.isdigit():
            tail = item[-SAME_NUMBER_DIGITS:]
            if any(tail in d for d in numbers):
                hits.add(item)
        elif item.upper() in compact:
            hits.add(item)
    return hits


def leaked_from(input_text: str, output: str) -> set[str]:
    """The private items of ``input_text`` that ``output`` repeats."""
    return leaked(private_items(input_text), output)
