"""The problem families the code gym's generator draws from, one per function to write.

Each family has a ground-truth implementation (the function below with the family's name: its
source is the problem's solution, and calling it on the host gives every expected answer), a
kind (the mix the outer loop evolves: ``basic``, ``edge_cases``, ``performance`` traps,
``input_validation``, ``security`` pitfalls), the difficulty ``level`` from which it is drawn,
typical examples (the visible tests) and hidden cases (edge cases first, then random inputs
whose number and size grow with the difficulty L), and, for performance traps, a large input
that a quadratic solution cannot finish within the time budget.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass

Args = tuple


@dataclass(frozen=True)
class Family:
    name: str
    kind: str
    level: float
    signature: str
    doc: str
    reference: Callable[..., object]
    examples: Callable[[random.Random], list[Args]]
    cases: Callable[[random.Random, float], list[Args]]
    perf: Callable[[random.Random, float], Args] | None = None
    perf_budget_s: float = 1.0


def _ints(rng: random.Random, n: int, lo: int = -50, hi: int = 50) -> list[int]:
    return [rng.randint(lo, hi) for _ in range(n)]


def _word(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(n))


def _size(level: float, lo: int, hi: int) -> int:
    return int(lo + (hi - lo) * level)


def _cycle(alphabet: int, n: int) -> str:
    """``n`` characters cycling through ``alphabet`` distinct ones (a long unique stretch)."""
    return "".join(chr(0x4E00 + i % alphabet) for i in range(n))


# -- basic ------------------------------------------------------------------------------------
def sum_of_evens(numbers: list[int]) -> int:
    return sum(n for n in numbers if n % 2 == 0)


def count_vowels(text: str) -> int:
    return sum(1 for c in text.lower() if c in "aeiou")


def reverse_words(sentence: str) -> str:
    return " ".join(reversed(sentence.split()))


def running_max(values: list[int]) -> list[int]:
    out: list[int] = []
    for v in values:
        out.append(v if not out else max(out[-1], v))
    return out


def caesar_shift(text: str, k: int) -> str:
    out = []
    for c in text:
        if c.islower():
            out.append(chr((ord(c) - 97 + k) % 26 + 97))
        elif c.isupper():
            out.append(chr((ord(c) - 65 + k) % 26 + 65))
        else:
            out.append(c)
    return "".join(out)


# -- edge cases -------------------------------------------------------------------------------
def second_largest(values: list[int]) -> int | None:
    distinct = sorted(set(values), reverse=True)
    return distinct[1] if len(distinct) >= 2 else None


def chunk(items: list[int], size: int) -> list[list[int]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def safe_mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def compress_runs(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        j = i
        while j < len(text) and text[j] == text[i]:
            j += 1
        out.append(f"{text[i]}{j - i}")
        i = j
    return "".join(out)


# -- performance traps ------------------------------------------------------------------------
def has_pair_with_sum(values: list[int], target: int) -> bool:
    seen: set[int] = set()
    for v in values:
        if target - v in seen:
            return True
        seen.add(v)
    return False


def longest_unique_run(text: str) -> int:
    last: dict[str, int] = {}
    start = best = 0
    for i, c in enumerate(text):
        if last.get(c, -1) >= start:
            start = last[c] + 1
        last[c] = i
        best = max(best, i - start + 1)
    return best


def range_sums(values: list[int], queries: list[tuple[int, int]]) -> list[int]:
    prefix = [0]
    for v in values:
        prefix.append(prefix[-1] + v)
    return [prefix[j] - prefix[i] for i, j in queries]


def most_frequent(values: list[int]) -> int | None:
    counts: dict[int, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    if not counts:
        return None
    return min(counts, key=lambda v: (-counts[v], v))


# -- input validation -------------------------------------------------------------------------
def parse_percentage(text: str) -> float:
    s = text.strip()
    if not s.endswith("%"):
        raise ValueError("missing %")
    number = s[:-1].strip()
    if not number or not number.replace(".", "", 1).isdigit():
        raise ValueError("not a number")
    value = float(number)
    if value > 100:
        raise ValueError("above 100%")
    return value / 100


def factorial(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int):
        raise ValueError("n must be an integer")
    if n < 0:
        raise ValueError("n must not be negative")
    out = 1
    for k in range(2, n + 1):
        out *= k
    return out


def average_speed(distance_km: float, hours: float) -> float:
    if distance_km < 0:
        raise ValueError("negative distance")
    if hours <= 0:
        raise ValueError("hours must be positive")
    return distance_km / hours


# -- security pitfalls ------------------------------------------------------------------------
def evaluate_sum(expression: str) -> int:
    parts = expression.split("+")
    total = 0
    for part in parts:
        token = part.strip()
        if not token.isdigit() or not token.isascii():
            raise ValueError(f"not a number: {token!r}")
        total += int(token)
    return total


def safe_join(base: str, name: str) -> str:
    if not name or name.startswith(("/", "\\")) or "/" in name or "\\" in name:
        raise ValueError("the name must be a plain file name")
    if name in (".", "..") or "\x00" in name:
        raise ValueError("not a file name")
    return base.rstrip("/") + "/" + name


def mask_secret(token: str) -> str:
    if len(token) <= 4:
        return "*" * len(token)
    return "*" * (len(token) - 4) + token[-4:]


FAMILIES: tuple[Family, ...] = (
    Family(
        "sum_of_evens",
        "basic",
        0.0,
        "def sum_of_evens(numbers: list[int]) -> int:",
        "Return the sum of the even numbers in the list.",
        sum_of_evens,
        lambda r: [([1, 2, 3, 4],), ([10, 15, 20],), (_ints(r, 5),)],
        lambda r, L: (
            [([],), ([-2, -3, 7],), ([0],)]
            + [(_ints(r, _size(L, 3, 40)),) for _ in range(2 + int(4 * L))]
        ),
    ),
    Family(
        "count_vowels",
        "basic",
        0.0,
        "def count_vowels(text: str) -> int:",
        "Count the vowels (a, e, i, o, u, upper or lower case) in the text.",
        count_vowels,
        lambda r: [("hello world",), ("EvoTrainer",), (_word(r, 8),)],
        lambda r, L: (
            [("",), ("AEIOU xyz",), ("rhythm",)]
            + [(_word(r, _size(L, 4, 60)),) for _ in range(2 + int(4 * L))]
        ),
    ),
    Family(
        "reverse_words",
        "basic",
        0.1,
        "def reverse_words(sentence: str) -> str:",
        "Return the words of the sentence in reverse order, separated by single spaces.",
        reverse_words,
        lambda r: [("one two three",), ("hello world",), (f"{_word(r, 3)} {_word(r, 4)}",)],
        lambda r, L: (
            [("",), ("  lots   of   space ",), ("single",)]
            + [
                (" ".join(_word(r, r.randint(1, 6)) for _ in range(_size(L, 2, 12))),)
                for _ in range(2 + int(3 * L))
            ]
        ),
    ),
    Family(
        "running_max",
        "basic",
        0.2,
        "def running_max(values: list[int]) -> list[int]:",
        "Return a list whose i-th item is the largest of values[0..i].",
        running_max,
        lambda r: [([1, 3, 2, 5, 4],), ([5, 4, 3],), (_ints(r, 4),)],
        lambda r, L: (
            [([],), ([-5, -7, -1],), ([2, 2, 2],)]
            + [(_ints(r, _size(L, 3, 30)),) for _ in range(2 + int(4 * L))]
        ),
    ),
    Family(
        "caesar_shift",
        "basic",
        0.3,
        "def caesar_shift(text: str, k: int) -> str:",
        "Shift every letter k places along the alphabet (wrapping around, keeping upper and "
        "lower case); leave other characters as they are. k may be negative or above 26.",
        caesar_shift,
        lambda r: [("abc", 1), ("Hello, World!", 3), (_word(r, 5), r.randint(1, 5))],
        lambda r, L: (
            [("", 4), ("xyz", 3), ("Zebra", -1), ("abc", 52)]
            + [(_word(r, _size(L, 3, 30)), r.randint(-60, 60)) for _ in range(2 + int(4 * L))]
        ),
    ),
    Family(
        "second_largest",
        "edge_cases",
        0.1,
        "def second_largest(values: list[int]) -> int | None:",
        "Return the second largest distinct value in the list, or None when there are fewer "
        "than two distinct values.",
        second_largest,
        lambda r: [([1, 5, 3],), ([10, 20, 30, 40],), (_ints(r, 5, 0, 100),)],
        lambda r, L: (
            [([],), ([7],), ([4, 4, 4],), ([9, 9, 8],), ([-1, -3, -2],)]
            + [(_ints(r, _size(L, 2, 30), -20, 20),) for _ in range(2 + int(4 * L))]
        ),
    ),
    Family(
        "chunk",
        "edge_cases",
        0.2,
        "def chunk(items: list[int], size: int) -> list[list[int]]:",
        "Split the list into consecutive chunks of `size` items; the last chunk may be "
        "shorter. An empty list gives an empty list.",
        chunk,
        lambda r: [([1, 2, 3, 4], 2), ([1, 2, 3, 4, 5], 2), (_ints(r, 6), 3)],
        lambda r, L: (
            [([], 3), ([1, 2], 5), ([1, 2, 3], 1)]
            + [(_ints(r, _size(L, 3, 30)), r.randint(1, 7)) for _ in range(2 + int(4 * L))]
        ),
    ),
    Family(
        "safe_mean",
        "edge_cases",
        0.2,
        "def safe_mean(values: list[float]) -> float:",
        "Return the arithmetic mean of the values, or 0.0 for an empty list.",
        safe_mean,
        lambda r: [([1.0, 2.0, 3.0],), ([10.0],), ([float(x) for x in _ints(r, 4)],)],
        lambda r, L: (
            [([],), ([-1.0, 1.0],), ([0.5, 0.25],)]
            + [([float(x) for x in _ints(r, _size(L, 2, 30))],) for _ in range(2 + int(3 * L))]
        ),
    ),
    Family(
        "compress_runs",
        "edge_cases",
        0.4,
        "def compress_runs(text: str) -> str:",
        "Write each run of equal characters as the character followed by the run's length, "
        'e.g. "aaab" -> "a3b1". An empty string gives an empty string.',
        compress_runs,
        lambda r: [("aaab",), ("abc",), ("".join(c * r.randint(1, 3) for c in "xyz"),)],
        lambda r, L: (
            [("",), ("a",), ("aaaaaaaaaaaa",), ("aabbaa",)]
            + [
                ("".join(r.choice("ab") * r.randint(1, 4) for _ in range(_size(L, 2, 15))),)
                for _ in range(2 + int(4 * L))
            ]
        ),
    ),
    Family(
        "has_pair_with_sum",
        "performance",
        0.3,
        "def has_pair_with_sum(values: list[int], target: int) -> bool:",
        "Whether two different positions of the list hold values that add up to target. "
        "The list may hold up to 100,000 values.",
        has_pair_with_sum,
        lambda r: [([1, 2, 3, 9], 8), ([1, 2, 4, 4], 8), (_ints(r, 5, 0, 9), 9)],
        lambda r, L: (
            [([], 0), ([4], 8), ([4, 4], 8), ([-3, 3], 0)]
            + [(_ints(r, _size(L, 3, 50)), r.randint(-20, 20)) for _ in range(2 + int(4 * L))]
        ),
        lambda r, L: (list(range(0, 4 * _size(L, 8000, 40000), 4)), -1),
        1.0,
    ),
    Family(
        "longest_unique_run",
        "performance",
        0.5,
        "def longest_unique_run(text: str) -> int:",
        "The length of the longest stretch of the text with no repeated character. The "
        "text may be 100,000 characters long.",
        longest_unique_run,
        lambda r: [("abcabcbb",), ("bbbbb",), ("pwwkew",)],
        lambda r, L: (
            [("",), ("a",), ("abba",), ("dvdf",)]
            + [(_word(r, _size(L, 5, 80)),) for _ in range(2 + int(4 * L))]
        ),
        lambda r, L: (_cycle(_size(L, 1000, 4000), 40000),),
        1.0,
    ),
    Family(
        "range_sums",
        "performance",
        0.6,
        "def range_sums(values: list[int], queries: list[tuple[int, int]]) -> list[int]:",
        "For each query (i, j) return sum(values[i:j]). There may be 100,000 values and "
        "100,000 queries.",
        range_sums,
        lambda r: [([1, 2, 3, 4], [(0, 2), (1, 4)]), ([5, 5], [(0, 0), (0, 2)])],
        lambda r, L: (
            [([], [(0, 0)]), ([7], [(0, 1), (1, 1)])]
            + [
                (v := _ints(r, _size(L, 3, 40)), [tuple(sorted(r.sample(range(len(v) + 1), 2)))])
                for _ in range(2 + int(4 * L))
            ]
        ),
        lambda r, L: (
            list(range(_size(L, 20000, 60000))),
            [(0, _size(L, 20000, 60000))] * _size(L, 2000, 8000),
        ),
        1.5,
    ),
    Family(
        "most_frequent",
        "performance",
        0.4,
        "def most_frequent(values: list[int]) -> int | None:",
        "The value that occurs most often (the smallest one among ties), or None for an "
        "empty list. The list may hold 100,000 values.",
        most_frequent,
        lambda r: [([1, 2, 2, 3],), ([4, 4, 5, 5],), (_ints(r, 6, 0, 3),)],
        lambda r, L: (
            [([],), ([9],), ([3, 1, 3, 1],), ([-1, -1, 2],)]
            + [(_ints(r, _size(L, 3, 40), 0, 6),) for _ in range(2 + int(4 * L))]
        ),
        lambda r, L: ([i % 997 for i in range(_size(L, 20000, 80000))],),
        1.0,
    ),
    Family(
        "parse_percentage",
        "input_validation",
        0.3,
        "def parse_percentage(text: str) -> float:",
        'Turn a percentage such as "45%" or " 12.5 %" into a fraction (0.45, 0.125). Raise '
        "ValueError when the text is not a number followed by %, or is above 100%.",
        parse_percentage,
        lambda r: [("45%",), (" 12.5 %",), (f"{r.randint(0, 100)}%",)],
        lambda r, L: (
            [("100%",), ("0%",), ("45",), ("abc%",), ("101%",), ("%",), ("-5%",)]
            + [(f"{r.randint(0, 100)}.{r.randint(0, 9)}%",) for _ in range(1 + int(3 * L))]
        ),
    ),
    Family(
        "factorial",
        "input_validation",
        0.2,
        "def factorial(n: int) -> int:",
        "Return n! for a non-negative integer n. Raise ValueError for a negative n or for "
        "anything that is not an int (a float or a bool included).",
        factorial,
        lambda r: [(3,), (5,), (r.randint(0, 8),)],
        lambda r, L: (
            [(0,), (1,), (-1,), (2.5,), (True,), ("3",)]
            + [(r.randint(0, _size(L, 10, 60)),) for _ in range(1 + int(3 * L))]
        ),
    ),
    Family(
        "average_speed",
        "input_validation",
        0.1,
        "def average_speed(distance_km: float, hours: float) -> float:",
        "Return the average speed in km/h. Raise ValueError when the distance is negative or "
        "the time is not positive.",
        average_speed,
        lambda r: [(100.0, 2.0), (42.195, 3.5), (float(r.randint(1, 90)), 1.5)],
        lambda r, L: (
            [(0.0, 1.0), (10.0, 0.0), (10.0, -1.0), (-5.0, 1.0)]
            + [(float(r.randint(0, 500)), r.randint(1, 20) / 2) for _ in range(1 + int(3 * L))]
        ),
    ),
    Family(
        "evaluate_sum",
        "security",
        0.4,
        "def evaluate_sum(expression: str) -> int:",
        'Evaluate a sum of non-negative integers such as "1 + 2 + 30". Raise ValueError for '
        "anything else (other operators, names, calls): the text comes from users.",
        evaluate_sum,
        lambda r: [("1 + 2",), ("10+20+30",), (" + ".join(str(r.randint(0, 99)) for _ in "abc"),)],
        lambda r, L: (
            [
                ("7",),
                ("2 * 3",),
                ("__import__('os').getcwd()",),
                ("1 + abs(-1)",),
                ("",),
                ("1 +",),
                ("1 - 1",),
            ]
            + [
                (" + ".join(str(r.randint(0, 999)) for _ in range(_size(L, 2, 12))),)
                for _ in range(1 + int(3 * L))
            ]
        ),
    ),
    Family(
        "safe_join",
        "security",
        0.5,
        "def safe_join(base: str, name: str) -> str:",
        'Return the path of file `name` inside directory `base` ("/srv/files", "a.txt" -> '
        '"/srv/files/a.txt"). Raise ValueError unless name is a plain file name: no "/", no '
        '"\\\\", not ".", not "..", not empty.',
        safe_join,
        lambda r: [("/srv/files", "a.txt"), ("/data/", "report.pdf"), ("/tmp", _word(r, 5))],
        lambda r, L: (
            [
                ("/srv", "../etc/passwd"),
                ("/srv", "/etc/passwd"),
                ("/srv", ".."),
                ("/srv", ""),
                ("/srv", "a/b"),
                ("/srv", "a\\b"),
                ("/srv/", "ok.txt"),
            ]
            + [("/srv/" + _word(r, 4), _word(r, 6) + ".txt") for _ in range(1 + int(3 * L))]
        ),
    ),
    Family(
        "mask_secret",
        "security",
        0.2,
        "def mask_secret(token: str) -> str:",
        "Hide a secret token for a log line: replace every character but the last four with "
        '"*"; a token of four characters or fewer is hidden completely.',
        mask_secret,
        lambda r: [("abcdef123456",), ("pa55word",), (_word(r, 10),)],
        lambda r, L: (
            [("",), ("abcd",), ("abcde",), ("xy",)]
            + [(_word(r, _size(L, 5, 40)),) for _ in range(1 + int(3 * L))]
        ),
    ),
)

KINDS: tuple[str, ...] = ("basic", "edge_cases", "performance", "input_validation", "security")
