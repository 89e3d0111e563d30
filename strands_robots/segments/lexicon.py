"""Word lists the normaliser and the rule checks share (docs/segments.md, "Official-label normalisation").

- verb phrases -> operation (section 3's operations), to tell when a rewrite would change
  the operation and when a label bundles two actions;
- group nouns (section 1, count-based tasks; section 3 roles);
- the activation controls of section 4;
- counts of objects to move in a task instruction (section 1, count-based tasks).
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
    ("release", "release"),
    ("let go of", "release"),
    ("drop", "release"),
)

#: ``push the wok around``: rotation in place of a grasped object, G1's agitate (section 3,
#: M1's note: "Rotation-in-place of a grasped pan is G1, not M1"); group 1 is the noun phrase.
IN_PLACE_ROTATION = re.compile(
    r"^(?:push|move|turn|spin|swirl|slide|shift) ((?:the|a|an) .+?) (?:around|about|back and forth|round and round)$"
)

#: Words that end a verb phrase, never a noun phrase (``the wok around`` is not a slot).
TRAILING_PARTICLE = re.compile(r" (?:around|about|back and forth|round and round)$")

_VERB_ALTERNATION = "|".join(re.escape(v) for v, _ in sorted(VERB_OPERATIONS, key=lambda p: len(p[0]), reverse=True))

#: ``... and place it ...``, ``..., then turn on ...``: a second action inside one label.
BUNDLE_PATTERN = re.compile(rf"(?:,\s*|\s+)(?:and then|and|then|after that|afterwards)\s+(?:{_VERB_ALTERNATION})\b")


def operation_of(text: str) -> str | None:
    """The operation named by the leading verb phrase of ``text`` (lower case), or None."""
    text = text.strip().lower()
    if IN_PLACE_ROTATION.match(text):
        return "agitate"
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


#: The event clause of a wait (``... to boil``, ``... until it beeps``): not part of its target.
WAIT_EVENT_CLAUSE = re.compile(
    r" (?:to (?!(?:the|a|an|its)\b)\S|until\b|till\b|while\b|so that\b|before\b|once\b|when\b|finishes\b|"
    r"is (?:done|finished|ready)\b|boils\b|beeps\b|stops\b)"
)


def wait_target(phrase: str) -> str:
    """The object waited on, without the event clause (``kettle to boil`` -> ``kettle``)."""
    m = WAIT_EVENT_CLAUSE.search(phrase)
    return phrase[: m.start()] if m and m.start() > 0 else phrase


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
    plural = head.endswith("s") and head not in PLURALIA_TANTUM and not head.endswith(_SINGULAR_S_ENDINGS)
    return head in GROUP_NOUNS or plural


# -- activation controls (section 4) --------------------------------------------------------------


#: Section-4 controls in the order a slot is tried against them: the first whose pattern it
#: matches is its control (a burner's position is part of its name, ``burner:front-left``).
_CONTROLS = (
    ("coffee machine", r"\b(?:coffee machine|coffee maker|espresso machine)\b"),
    ("toaster oven temperature knob", r"^(?=.*temperature).*toaster oven"),
    ("toaster oven", r"toaster oven"),
    ("toaster", r"\btoaster\b"),
    ("electric kettle", r"\belectric kettle\b"),
    ("sink faucet", r"\b(?:faucet|tap)\b"),
    ("burner:", r"\b((?:front|rear|back|center|middle)(?:-(?:left|right|center))?|left|right)?\s*burner\b"),
    ("oven", r"\boven\b"),
    ("microwave", r"\bmicrowave\b"),
    ("blender", r"\bblender\b"),
)


def control_of(target: str) -> str:
    """The section-4 control a slot names: ``coffee machine``, ``toaster``, ``electric kettle``,
    ``toaster oven temperature knob``, ``toaster oven``, ``sink faucet``, ``burner:<pos>``,
    ``oven``, ``microwave``, ``blender``, or the slot text itself."""
    t = target.strip().lower()
    for control, pattern in _CONTROLS:
        if m := re.search(pattern, t, re.S):
            return f"burner:{m.group(1) or ''}" if control == "burner:" else control
    return t


#: Controls that stay on until turned off (their on/off state can be tracked in an episode).
STATEFUL_CONTROLS = ("sink faucet", "burner:", "oven", "blender")


def is_stateful_control(control: str) -> bool:
    """True for controls of section 4 that stay on until someone turns them off."""
    return any(control == c or (c.endswith(":") and control.startswith(c)) for c in STATEFUL_CONTROLS)


# -- counts in task text (section 1) --------------------------------------------------------------

_NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a dozen": 12,
    "both": 2,
    "pair of": 2,
    "a pair of": 2,
}
_COUNT_ALTERNATION = "|".join(sorted(map(re.escape, _NUMBER_WORDS), key=len, reverse=True)) + r"|\d+"
_COUNT = re.compile(rf"\b({_COUNT_ALTERNATION})\b")
#: Verbs that move an object: only a count of what they move makes a task count-based.
MOVE_VERBS = re.compile(
    r"\b(?:pick|place|put|move|bring|transfer|stack|take|carry|set down|load|unload|store|arrange|distribute|"
    r"pack|drop|insert|fetch|deliver|serve|return|retrieve|get|grab|lift|lay|hang|sort|gather|collect|"
    r"throw|toss)\b"
)
#: Words after a number that make it a quantity, not a number of objects (``2 minutes``, ``350 degrees``).
_NOT_OBJECTS = frozenset(
    {
        "minute", "minutes", "min", "mins", "second", "seconds", "sec", "secs", "s", "hour", "hours", "h",
        "degree", "degrees", "deg", "f", "c", "time", "times", "percent", "inch", "inches", "cm", "mm",
        "centimeter", "centimeters", "centimetre", "centimetres", "meter", "meters", "metre", "metres", "feet",
        "foot", "turn", "turns", "click", "clicks", "notch", "notches", "level", "levels", "setting", "settings",
        "hands", "arms", "grippers", "sides", "ways", "steps",
    }
)  # fmt: skip
#: A word before a number that makes it a level or a label, not a count (``to 350``, ``burner 2``).
_LEVEL_BEFORE = frozenset({"to", "at", "level", "setting", "number", "mark", "speed", "power", "position", "no"})
#: Words a number may be followed by and still count objects (``two of the apples``).
_FUNCTION_WORDS = frozenset({"to", "and", "or", "at", "for", "in", "on", "into", "onto", "from", "with", "by", "than"})
_CLAUSE = re.compile(r"[.;,]|\bthen\b")
#: ``in each glass``, ``on every plate``: a distribution over receptacles (a placement preposition).
_EACH_RECEPTACLE = re.compile(
    r"\b(?:in|on|into|onto|inside|under|to|at|beside|next to|across|between)\s+(?:each|every)\b"
)
#: ``two per plate``: a per-receptacle count.
_PER = re.compile(rf"\b({_COUNT_ALTERNATION})\s+per\b")
#: ``each of the three glasses``, ``every one of 4 plates``: the number of receptacles.
_RECEPTACLE_COUNT = re.compile(r"\s+(?:one\s+)?of\s+(?:the\s+|these\s+|those\s+)?(" + _COUNT_ALTERNATION + r")\b")
#: ``each`` implies at least two receptacles when their number is not stated.
MIN_RECEPTACLES = 2


def _value(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBER_WORDS[word]


def _object_count(text: str, m: re.Match[str]) -> bool:
    """True when the number at ``m`` counts objects (``three apples``), not a quantity or a level."""
    before = text[: m.start()].split()
    if before and before[-1] in _LEVEL_BEFORE:
        return False  # 'set the knob to 350', 'the burner at 2'
    after = re.match(r"\s*([a-z°%]+)", text[m.end() :])
    if after is None or after.group(1) in _NOT_OBJECTS | _FUNCTION_WORDS | {"per"} or after.group(1) in "°%":
        return False  # '... to 350' at the end, '2 minutes', '350 degrees', 'with both hands', 'two of', 'two per'
    # 'the pair of tongs' is one object
    return not (m.group(1).endswith("pair of") and head_noun(text[m.end() :].split(",")[0]) in PLURALIA_TANTUM)


def _moved(text: str, position: int) -> bool:
    """True when a verb that moves objects comes before ``position`` in the same clause."""
    clause_start = max((c.end() for c in _CLAUSE.finditer(text, 0, position)), default=0)
    return MOVE_VERBS.search(text, clause_start, position) is not None


def count_requirement(task: str) -> tuple[int, bool] | None:
    """``(minimum instances, per_receptacle)`` when ``task`` is count-based, else None.

    The rule and its examples: docs/segments.md, "Validation and findings" (``count_task_pairs``):
    ``place two ice cubes in each of the three glasses`` -> ``(6, True)``, ``a lemon on each
    plate`` -> ``(2, True)``, ``place three apples in the bowl`` -> ``(3, False)``. A total stated
    elsewhere (``six cookies, two per plate``) raises the minimum to it.
    """
    text = " ".join(task.lower().split())
    objects = [
        (m.start(), _value(m.group(1)))
        for m in _COUNT.finditer(text)
        if _object_count(text, m) and _moved(text, m.start())
    ]
    each = _EACH_RECEPTACLE.search(text)
    per = _PER.search(text)
    if each is None and per is None:
        plural = [c for _, c in objects if c >= 2]
        return (max(plural), False) if plural else None
    used: set[int] = set()
    receptacles = None
    if each is None or (per is not None and per.start() < each.start()):
        per_item = _value(per.group(1)) if per is not None else 1
    else:
        rm = _RECEPTACLE_COUNT.match(text, each.end())
        if rm is not None:
            receptacles = _value(rm.group(1))
        before = [(start, c) for start, c in objects if start < each.start()]
        per_item = 1
        if before:
            start, per_item = before[-1]  # the count nearest before 'each': 'two ice cubes in each'
            used.add(start)
    minimum = per_item * (receptacles if receptacles is not None else MIN_RECEPTACLES)
    others = [c for start, c in objects if start not in used and c >= 2]
    return max([minimum, *others]), True
