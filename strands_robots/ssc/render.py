"""Natural-language rendering of SST entries (paper ``001``, Sec. 3.1).

The structured fields compose into a sentence: subject (arm), predicate (verb),
object and conditions, e.g. ``right arm picks up book from breakfast table``. Base
motion is rendered separately and merged with a hold ("robot moves to table while
right arm holds book").
"""

from __future__ import annotations

import re

from strands_robots.ssc.records import ActionEntry, SceneGraph, StructuredSubtaskChain, SubtaskEntry
from strands_robots.ssc.verbs import VERBS

_VOWELS = set("aeiou")
_IRREGULAR_3RD = {"go": "goes", "do": "does", "have": "has", "be": "is"}
_IRREGULAR_ING = {"be": "being", "see": "seeing", "tie": "tying", "lie": "lying", "die": "dying"}


def display_name(obj: str | None, *, keep_index: bool = False) -> str:
    """Readable object name: ``coffee_table_0`` -> ``coffee table`` (index dropped unless asked)."""
    if obj is None:
        return ""
    text = obj if keep_index else re.sub(r"_\d+$", "", obj)
    return " ".join(text.replace("_", " ").split())


def display_text(text: str) -> str:
    """A condition phrase with ids made readable (``from breakfast_table_3`` -> ``from breakfast table``)."""
    return " ".join(display_name(w) if "_" in w else w for w in text.split())


def third_person(verb: str) -> str:
    """``pick`` -> ``picks``, ``push`` -> ``pushes``, ``carry`` -> ``carries``."""
    if verb in _IRREGULAR_3RD:
        return _IRREGULAR_3RD[verb]
    if verb.endswith(("s", "sh", "ch", "x", "z")):
        return verb + "es"
    if len(verb) > 1 and verb.endswith("y") and verb[-2] not in _VOWELS:
        return verb[:-1] + "ies"
    return verb + "s"


def gerund(verb: str) -> str:
    """``pick`` -> ``picking``, ``place`` -> ``placing``, ``stir`` -> ``stirring``."""
    if verb in _IRREGULAR_ING:
        return _IRREGULAR_ING[verb]
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith(("ee", "ye", "oe")) and len(verb) > 2:
        return verb[:-1] + "ing"
    groups = re.findall(r"[aeiou]+", verb)
    if (
        len(groups) == 1
        and len(verb) >= 3
        and verb[-1] not in _VOWELS | set("wxy")
        and verb[-2] in _VOWELS
        and verb[-3] not in _VOWELS
    ):
        return verb + verb[-1] + "ing"  # one-syllable CVC: stir -> stirring
    return verb + "ing"


def action_phrase(a: ActionEntry, *, form: str = "present") -> str:
    """Predicate + object + conditions, without the subject.

    Args:
        a: The action.
        form: ``present`` (third person, "picks up book"), ``plural`` ("pick up book")
            or ``gerund`` ("picking up book", the L3 prompts' form).
    """
    row = VERBS.get(a.verb)
    words = (row.phrase if row is not None else (a.action_verb or "act").replace("_", " ")).split()
    if form == "present":
        words[0] = third_person(words[0])
    elif form == "gerund":
        words[0] = gerund(words[0])
    parts = [" ".join(words)]
    obj = display_name(a.action_obj)
    if a.action_obj_cond:  # "lever of coffee machine"
        obj = ", ".join(a.action_obj_cond) + (f" of {obj}" if obj else "")
    if obj:
        parts.append(obj)
    if a.role == "hand_over" and a.receiver:
        parts.append(f"to {a.receiver} arm")
    elif a.role == "take_over" and a.receiver:
        parts.append(f"from {a.receiver} arm")
    parts += [display_text(c) for c in a.action_cond]
    return " ".join(p for p in parts if p)


def render_action(a: ActionEntry) -> str:
    """``right arm picks up book from breakfast table``."""
    if a.arm == "coop":
        return f"both arms {action_phrase(a, form='plural')}"
    subject = "an unresolved arm" if a.arm == "unsure" else f"{a.arm} arm"
    return f"{subject} {action_phrase(a)}"


def _holds(g: SceneGraph) -> str:
    left, right = g.obj_in_left_hand, g.obj_in_right_hand
    if left is not None and left == right and g.holding_same_object is True:
        return f"both arms hold {display_name(left)}"
    parts = [f"{h} arm holds {display_name(o)}" for h, o in (("left", left), ("right", right)) if o is not None]
    return " and ".join(parts)


def render_entry(entry: SubtaskEntry) -> str:
    """One sentence for an entry: its actions joined by "and", or its base motion.

    A move entry while something is held becomes "robot moves to X while right arm
    holds Y" (Sec. 3.1, "Motion is separate from arm-side actions").
    """
    sentences = [render_action(a) for a in entry.actions]
    if entry.st_motion == "move":
        motion = " ".join(["robot moves", *[display_text(c) for c in entry.st_motion_cond]])
        holding = _holds(entry.scene_graph)
        if sentences:
            return f"{motion} while " + " and ".join(sentences)
        return f"{motion} while {holding}" if holding else motion
    if sentences:
        return " and ".join(sentences)
    if entry.st_motion_cond:
        return " ".join(["robot waits", *[display_text(c) for c in entry.st_motion_cond]])
    return "robot idles"


def render_chain(chain: StructuredSubtaskChain) -> list[str]:
    """``"st3 [120, 240): right arm picks up book from table"`` per entry."""
    return [f"st{e.st_idx} [{e.st_duration[0]}, {e.st_duration[1]}): {render_entry(e)}" for e in chain.subtasks]
