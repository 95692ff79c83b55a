"""The reference to a patient that the conversation, the tools and the record's checks pass around."""

from __future__ import annotations

from typing import TypedDict


class PatientRef(TypedDict):
    """The active patient of a conversation; carried across turns."""

    id: str
    name: str
