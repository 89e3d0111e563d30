"""Official-label normalisation (docs/segments.md, "Official-label normalisation").

The operation is never changed: a label whose rewrite would change it, that bundles two
actions, or that no template fits after the rewrites is kept raw as an exception.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from strands_robots.segments.lexicon import IN_PLACE_ROTATION, WAIT_EVENT_CLAUSE, bundled_action, operation_of
from strands_robots.segments.parse import TemplateInstance, clean_text, nearest_template, parse_candidates
from strands_robots.segments.templates import TASK_COMPLETE


@dataclass(frozen=True)
class Normalized:
    """Result of :func:`normalize_official_label`.

    Attributes:
        text: The label to use (the raw label when ``exception`` is set).
        changed: ``text`` differs from the input.
        exception: None, or why the label was kept raw.
        rewrites: Names of the rewrites applied, in order.
        instance: The parsed template instance of ``text`` (None for an exception that
            fits no template).
        original: The input.
        operation: The operation of the label's leading verb phrase.
        fold: True for a release without transport (``release the spatula``): the label is
            no segment of its own; its frames belong to the preceding segment (an
            exception too, for a label with nothing before it).
    """

    text: str
    changed: bool
    exception: str | None
    rewrites: tuple[str, ...] = ()
    instance: TemplateInstance | None = None
    original: str = ""
    operation: str | None = field(default=None)
    fold: bool = False


#: Manner adverbs (section 5 lists fully, lightly, briefly, securely, back).
MANNER_ADVERBS = (
    "fully",
    "lightly",
    "briefly",
    "securely",
    "carefully",
    "gently",
    "slowly",
    "quickly",
    "completely",
    "firmly",
    "properly",
    "thoroughly",
    "tightly",
)

#: Words after ``to`` that are a level, not a purpose (``turn on the burner to medium``).
SETTING_WORDS = frozenset(
    {
        "low",
        "medium",
        "high",
        "max",
        "maximum",
        "min",
        "minimum",
        "lowest",
        "highest",
        "higher",
        "lower",
        "hot",
        "cold",
        "warm",
        "full",
        "half",
        "off",
        "on",
        "mid",
        "medium-high",
        "medium-low",
        "medium-hot",
    }
)

#: Position descriptors that make a noun unique (``the front-left burner``), so a
#: ``where ...`` restrictor after it is redundant.
POSITION_WORDS = re.compile(
    r"\b(?:front|rear|back|center|middle|left|right|top|bottom|upper|lower)(?:-(?:left|right|center))?\b"
)

_ROBOT_RELATIVE = (
    re.compile(
        r"\s+(?:that is |which is )?(?:(?:directly|right|closest|nearest) )?"
        r"(?:in front of|behind|next to|near|nearest to|closest to|beside|facing|to the (?:left|right) of|"
        r"on the (?:left|right)(?: side)? of)\s+(?:the )?robot\b"
    ),
    re.compile(r"\s+(?:on|to) the robot'?s (?:left|right)(?: side)?\b"),
    re.compile(r"\s+(?:closest|nearest) to (?:the )?robot\b"),
)
_WAIT_EVENT = re.compile(r"^(wait for (?:the|a|an) .+?)(?:" + WAIT_EVENT_CLAUSE.pattern + r").*$")
_FAUCET_ON_OFF = re.compile(r"^turn (on|off) the (?:water in the sink|water|sink water|sink|faucet|tap|sink tap)$")
_UNDER_WATER = re.compile(r"^(hold (?:the|a|an) .+? under) the (?:running water|water|faucet|tap|sink)$")
_WHERE_RESTRICTOR = re.compile(r" (?:where|that has|which has|with which) [^,]+?(?=(?: to \S+)?$)")


def _drop_back(text: str) -> str:
    # 'back' as an adverb (navigate back to, place the bowl back in), never the noun/adjective
    # ('the back burner', 'the back of the counter').
    return re.sub(r"(?<!\bthe)(?<!\ba)\s+back(?=\s+(?:to|in|into|on|onto|under|inside|at)\b)", "", text)


def _drop_adverbs(text: str) -> str:
    words = "|".join(MANNER_ADVERBS)
    text = re.sub(r"^(?:" + words + r")\s+", "", text)  # before the verb: 'fully open the fridge'
    return re.sub(r"\s+(?:" + words + r")\b", "", text)


def _drop_robot_relative(text: str) -> str:
    for pattern in _ROBOT_RELATIVE:
        text = pattern.sub("", text)
    return text


def _drop_wait_event(text: str) -> str:
    return _WAIT_EVENT.sub(r"\1", text)


def _drop_purpose(text: str) -> str:
    # ' to <verb> ...' at the end, when what is left still fits a template and the word after
    # 'to' is not a level ('to medium'), an article ('to the sink') or a number.
    for m in re.finditer(r" (?:in order )?to (?!the\b|a\b|an\b)(\S+)", text):
        word = m.group(1)
        if word in SETTING_WORDS or word[0].isdigit():
            continue
        head = text[: m.start()]
        candidates = parse_candidates(head)
        if not candidates:
            continue
        rest = text[m.start() :].split()
        if "setting" in candidates[0].template.modifiers and len(rest) == 2:
            continue  # 'turn on the burner to simmer': a one-word level, not a purpose
        return head
    return text


def _drop_redundant_restrictor(text: str) -> str:
    m = _WHERE_RESTRICTOR.search(text)
    if not m:
        return text
    before = text[: m.start()]
    noun_phrase = before.rsplit(" the ", 1)[-1]
    if not POSITION_WORDS.search(noun_phrase):
        return text  # not already unique: the restrictor identifies the referent, keep it
    return before + text[m.end() :]


def _in_place_rotation(text: str) -> str:
    # 'push the wok around' rotates a grasped pan in place: G1 'rotate the wok' (M1's note).
    return IN_PLACE_ROTATION.sub(r"rotate \1", text)


def _knob_to_setting(text: str) -> str:
    # 'turn the X knob to high' says J1's 'set the X knob to high' with another verb.
    return re.sub(r"^turn (the .+? knob) to (?!the\b)(\S.*)$", r"set \1 to \2", text)


def _faucet(text: str) -> str:
    text = _FAUCET_ON_OFF.sub(r"turn \1 the sink faucet", text)
    return _UNDER_WATER.sub(r"\1 the sink faucet", text)


#: The rewrites, in the order they are applied: (name, function).
REWRITES: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("drop_back", _drop_back),
    ("drop_manner_adverb", _drop_adverbs),
    ("drop_robot_relative_location", _drop_robot_relative),
    ("drop_wait_event_clause", _drop_wait_event),
    ("drop_purpose_clause", _drop_purpose),
    ("drop_redundant_restrictor", _drop_redundant_restrictor),
    ("sink_faucet", _faucet),
    ("knob_to_setting", _knob_to_setting),
    ("rotation_in_place", _in_place_rotation),
)

#: The official labels are RoboCasa365 labels: after the rewrites they must fit its templates.
OFFICIAL_COHORT = "robocasa365"

FOLD_REASON = (
    "a release without transport is folded into the preceding segment (guideline section 1: extend that segment "
    "over these frames; if the object is carried to a new place first, label it place)"
)

#: The document's rewrite examples (section 5), ``X`` instantiated; every one is a test.
DOCUMENT_EXAMPLES: tuple[tuple[str, str], ...] = (
    ("navigate back to the X", "navigate to the X"),
    ("open the drawer in front of the robot", "open the drawer"),
    ("turn on the front-left burner where the kettle is placed", "turn on the front-left burner"),
    ("turn on the left burner where the kettle is placed", "turn on the left burner"),
    ("wait for the toaster to finish and the lever to pop up", "wait for the toaster"),
    ("turn on the water in the sink", "turn on the sink faucet"),
    ("turn on the sink", "turn on the sink faucet"),
)


def _raw(original: str, cleaned: str, why: str, parses: list[TemplateInstance], rewrites=()) -> Normalized:
    instance = parses[0] if parses else None
    return Normalized(original.strip(), False, why, tuple(rewrites), instance, original, operation_of(cleaned))


def _fitted(instance: TemplateInstance, original: str, rewrites: tuple[str, ...]) -> Normalized:
    final = instance.render()
    return Normalized(final, final != original, None, rewrites, instance, original, instance.operation)


def normalize_official_label(text: str) -> Normalized:
    """Rewrite an official label into its template instance's text.

    Args:
        text: An official label, e.g. ``"navigate back to the fridge"``.

    Returns:
        :class:`Normalized`: ``.text`` is the label to use, ``.changed`` whether it differs
        from the input, ``.exception`` None or why the label was kept raw (it would change
        the operation, it bundles two actions, or no template fits).
    """
    original = str(text)
    cleaned = clean_text(original).lower()
    if cleaned == "task complete" or cleaned == TASK_COMPLETE.lower():
        return _fitted(parse_candidates(TASK_COMPLETE)[0], original, ("terminal",))
    raw_parse = parse_candidates(cleaned)
    if raw_parse and not {OFFICIAL_COHORT, "generic"} & set(raw_parse[0].template.cohorts):
        # A cohort label (AgiBot ``Pick``, Allex ``Rotate Box``, docs/segments.md, "Templates") is
        # already its template: the RoboCasa365 rewrites and verb lexicon do not apply to it
        # ('rotate' is G1's agitate verb there, but ``Rotate Box`` is its own operation).
        return _fitted(raw_parse[0], original, ())
    raw_operation = operation_of(cleaned)
    if second := bundled_action(cleaned):
        return _raw(
            original,
            cleaned,
            f"bundles two actions ('{second}'): split it into one segment per action (docs/segments.md, "
            "Validation and findings: never bundle two actions in one label)",
            raw_parse,
        )
    candidate = cleaned
    applied = []
    for name, rewrite in REWRITES:
        rewritten = rewrite(candidate)
        if rewritten != candidate:
            applied.append(name)
            candidate = " ".join(rewritten.split())
    parsed = parse_candidates(candidate, cohort=OFFICIAL_COHORT)
    raw_parse = [p for p in raw_parse if OFFICIAL_COHORT in p.template.cohorts]
    if parsed and raw_operation in (None, parsed[0].operation):
        return _fitted(parsed[0], original, tuple(applied))
    if parsed:
        why = f"normalising to {candidate!r} would change the operation from {raw_operation} to {parsed[0].operation}"
    elif raw_operation == "release":
        return replace(_raw(original, cleaned, FOLD_REASON, [], applied), fold=True)
    else:
        nearest, example = nearest_template(candidate, cohort=OFFICIAL_COHORT)
        why = f"no template fits {candidate!r} (nearest {nearest.id} {nearest.surface!r}, e.g. {example!r})"
    return _raw(original, cleaned, f"{why}; kept raw", raw_parse, applied)
