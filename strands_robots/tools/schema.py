"""Strict argument types for the judge tools' strands signatures (docs/judge.md, "Tool schemas").

strands validates a model's arguments with a pydantic model built from a tool's type
hints. These hints make it strict (pydantic's lax mode takes ``true`` as ``1`` and
``"yes"`` as ``True``) and put the vocabulary into the JSON schema the model reads.
strands drops ``Annotated`` metadata such as ``pydantic.Strict()``, so the strictness is
carried by the types' own pydantic core schema. A direct Python call skips strands'
validation; the tools check every argument again themselves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic_core import core_schema

from strands_robots.episode_labels.vocab import FAILURE_MODES, QUALITY_GRADES

if TYPE_CHECKING:
    # What a validated argument is at run time (the schemas below give Python's int and bool);
    # the classes only carry pydantic's strict schema into the tool's signature.
    JsonInt = int
    JsonBool = bool
else:

    class JsonInt(int):
        """A strict integer argument (``True``, ``1.0`` and ``"1"`` are refused)."""

        @classmethod
        def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> core_schema.CoreSchema:
            return core_schema.int_schema(strict=True)

    class JsonBool(int):
        """A strict boolean argument (``1``, ``"true"`` and ``"yes"`` are refused)."""

        @classmethod
        def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> core_schema.CoreSchema:
            return core_schema.bool_schema(strict=True)


#: ``quality``: one of ``QUALITY_GRADES`` (an ``enum`` in the schema).
QualityArg = Literal[QUALITY_GRADES]  # type: ignore[valid-type]

#: ``failure_mode``: one of ``FAILURE_MODES`` (an ``enum`` in the schema), or null.
FailureModeArg = Literal[FAILURE_MODES]  # type: ignore[valid-type]
