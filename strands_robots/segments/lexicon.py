"""Word lists the normaliser and the rule checks share (seed ``000_0d474dc75f5d9f55.txt``).

- verb phrases -> operation (section 3's operations), to tell when a rewrite would change
  the operation and when a label bundles two actions;
- group nouns (section 1, count-based tasks; section 3 roles);
- the activation controls of section 4;
- counts in a task instruction (section 1, count-based tasks).
"""

from __future__ import annotations

import re

#: Leading verb phrase -> operation, longest first where prefixes overlap.
VERB_OPERATIONS: tuple[tuple[str, str], ...] = (
    ("push down the lever", "activate"),
    ("press the start button", "activate"),
    ("turn on", "activate"),
    ("switch on", "activate"),
    ("turn off", "deactivate"),
    ("switch off", "deactivate"),
    ("navigate", "navigate"),
    ("go to", "navigate"),
    ("move to", "navigate"),
    ("open", "open"),
    ("close", "close"),
    ("shut", "close"),
    ("slide", "slide"),
    ("pick up", "pick"),
    ("pick", "pick"),
    ("grab", "pick"),
    ("take", "pick"),
    ("lift", "pick"),
    ("set down", "place"),
    ("place", "place"),
    ("put", "place"),
    ("stack", "place"),
    ("dump", "pour"),
    ("pour", "pour"),
    ("push", "push"),
    ("hold", "hold"),
    ("set", "adjust"),
    ("adjust", "adjust"),
    ("turn", "adjust"),
    ("sweep", "adjust"),
    ("stir", "stir"),
    ("scrub", "scrub"),
    ("wipe", "scrub"),
    ("wash", "scrub"),
    ("clean", "scrub"),
    ("shake", "agitate"),
    ("tilt", "agitate"),
    ("rotate", "agitate"),
    ("press", "press"),
    ("wait", "wait"),
)

_VERB_ALTERNATION = "|".join(re.escape(v) for v, _ in sorted(VERB_OPERATIONS, key=lambda p: len(p[0]), reverse=True))

#: ``... and place it ...``, ``..., then turn on ...``: a second action inside one label.
BUNDLE_PATTERN = re.compile(rf"(?:,\s*|\s+)(?:and then|and|then|after that|afterwards)\s+(?:{_VERB_ALTERNATION})\b")


def operation_of(text: str) -> str | None:
    """The operation named by the leading verb phrase of ``text`` (lower case), or None."""
    text = text.strip().lower()
    if re.search(r"\bto off$", text):
        return "deactivate"  # 'turn the knob to off' is on -> off (section 1)
    if re.search(r"\bto on$", text):
        return "activate"
    for verb, operation in VERB_OPERATIONS:
        if text == verb or text.startswith(verb + " "):
            return operation
    return None


def bundled_action(text: str) -> str | None:
    """The second verb phrase when ``text`` bundles two actions (``and place it``), else None."""
    m = BUNDLE_PATTERN.search(text.lower())
    return m.group(0).strip(" ,") if m else None


# -- nouns ----------------------------------------------------------------------------------------

#: Plural-looking nouns that name one object.
PLURALIA_TANTUM = frozenset({"tongs", "scissors", "pliers", "tweezers", "glasses", "chopsticks"})
#: Singular-looking nouns that name a group.
GROUP_NOUNS = frozenset({"cutlery", "silverware", "produce", "groceries", "food", "dishware", "utensils"})
_SINGULAR_S_ENDINGS = ("ss", "us", "is", "ous")
_RESTRICTOR = re.compile(r" (?:with|in|on|from|of|that|which|for|under|next|near|behind|inside|at|to|where|by) .*$")


def head_noun(phrase: str) -> str:
    """The canonical noun of a slot (``tupperware with only the fish in it`` -> ``tupperware``)."""
    core = _RESTRICTOR.sub("", phrase.strip().lower())
    words = core.split()
    return words[-1] if words else ""


def is_group_noun(phrase: str) -> bool:
    """True when the slot names several objects (``bowls``, ``vegetables``, ``cutlery``)."""
    head = head_noun(phrase)
    if head in GROUP_NOUNS:
        return True
    if head in PLURALIA_TANTUM or not head.endswith("s"):
        return False
    return not head.endswith(_SINGULAR_S_ENDINGS)


# -- activation controls (section 4) --------------------------------------------------------------


def control_of(target: str) -> str:
    """The section-4 control a slot names: ``coffee machine``, ``toaster``, ``electric kettle``,
    ``toaster oven temperature knob``, ``toaster oven``, ``sink faucet``, ``burner:<pos>``,
    ``oven``, ``microwave``, ``blender``, or the slot text itself."""
    t = target.strip().lower()
    if re.search(r"\b(?:coffee machine|coffee maker|espresso machine)\b", t):
        return "coffee machine"
    if "toaster oven" in t:
        return "toaster oven temperature knob" if "temperature" in t else "toaster oven"
    if re.search(r"\btoaster\b", t):
        return "toaster"
    if re.search(r"\belectric kettle\b", t):
        return "electric kettle"
    if re.search(r"\b(?:faucet|tap)\b", t):
        return "sink faucet"
    m = re.search(r"\b((?:front|rear|back|center|middle)(?:-(?:left|right|center))?|left|right)?\s*burner\b", t)
    if m:
        return f"burner:{m.group(1) or ''}"
    if re.search(r"\boven\b", t):
        return "oven"
    if re.search(r"\bmicrowave\b", t):
        return "microwave"
    if re.search(r"\bblender\b", t):
        return "blender"
    return t


#: Controls that stay on until turned off (their on/off state can be tracked in an episode).
STATEFUL_CONTROLS = ("sink faucet", "burner:", "oven", "blender")


def is_stateful_control(control: str) -> bool:
    """True for controls of section 4 that stay on until someone turns them off."""
    return any(control == c or (c.endswith(":") and control.startswith(c)) for c in STATEFUL_CONTROLS)


# -- counts in task text (section 1) --------------------------------------------------------------

_NUMBER_WORDS = {
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "both": 2,
    "pair of": 2,
    "a pair of": 2,
}
_COUNT_ALTERNATION = "|".join(sorted(map(re.escape, _NUMBER_WORDS), key=len, reverse=True)) + r"|\d+"
_COUNT = re.compile(rf"\b({_COUNT_ALTERNATION})\b")
_PER_RECEPTACLE = re.compile(r"\b(?:each|every|per)\b")
#: ``each of the three glasses``, ``every one of 4 plates``: the number of receptacles.
_RECEPTACLE_COUNT = re.compile(r"\s+(?:one\s+)?of\s+(?:the\s+|these\s+|those\s+)?(" + _COUNT_ALTERNATION + r")\b")


def _value(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBER_WORDS[word]


def count_requirement(task: str) -> tuple[int, bool] | None:
    """``(minimum instances, per_receptacle)`` when ``task`` is count-based, else None.

    Section 1 of seed ``000_0d474dc75f5d9f55.txt``: each instance is its own pick + place
    pair, so a per-receptacle distribution multiplies: ``place two ice cubes in each of the
    three glasses`` -> ``(6, True)``. When the number of receptacles is not stated
    (``place two ice cubes in each glass``) the minimum is the per-receptacle count, and at
    least 2 (``a lemon on each plate``: ``each`` implies two plates or more) -> ``(2, True)``.
    A total stated elsewhere (``six cookies, two per plate``) raises the minimum to it.
    Without ``each``/``every``/``per`` the largest count is the minimum:
    ``place three apples in the bowl`` -> ``(3, False)``; ``put the bowl away`` -> None.
    """
    text = task.lower()
    counts = [(m.start(), m.end(), _value(m.group(1))) for m in _COUNT.finditer(text)]
    per = _PER_RECEPTACLE.search(text)
    if per is None:
        plural = [c for _, _, c in counts if c >= 2]
        return (max(plural), False) if plural else None
    receptacles = None
    used: set[int] = set()
    rm = _RECEPTACLE_COUNT.match(text, per.end())
    if rm is not None:
        receptacles = _value(rm.group(1))
        used.add(rm.start(1))
    before = [c for c in counts if c[1] <= per.start()]
    per_item = 1
    if before:
        start, _end, per_item = before[-1]  # the count nearest before 'each': 'two ice cubes in each'
        used.add(start)
    minimum = per_item * receptacles if receptacles is not None else max(per_item, 2)
    others = [c for s, _, c in counts if s not in used and c >= 2]
    return max([minimum, *others]), True
