"""What a slash command hands the UI besides its text: one typed payload per kind of answer.

:class:`~mnemara.commands.CommandResult` carries at most one payload. The UIs read the payloads
of an action (:class:`SendTurn`, :class:`Confirm`, :class:`CopyText`, :class:`FileShown`,
:class:`InboxState`) and of the ``/help`` listing (:class:`HelpColumns`) and a refused line
(:class:`RefusedInput`); the others are the command's result as data, for embedders and tests.
An eviction or a compression hands its own result (:class:`~mnemara.context.eviction.EvictionResult`,
:class:`~mnemara.context.compress.CompressReport`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict, Union

from mnemara.context.compress import CompressReport
from mnemara.context.eviction import EvictionResult


@dataclass(frozen=True)
class SendTurn:
    """Action ``send``: the UI sends ``text`` to the agent as a turn (``/compress smart``)."""

    text: str


@dataclass(frozen=True)
class Confirm:
    """Action ``confirm``: the UI asks ``question`` and on yes runs ``command`` (the same command with ``--yes``)."""

    command: str
    question: str
    title: str = "Compress the window?"
    yes_label: str = "Compress (y)"
    plan: tuple[str, ...] = ()  # what the command would do, one line each


@dataclass(frozen=True)
class CopyText:
    """Action ``copy``: the UI puts ``text`` on the clipboard."""

    text: str


@dataclass(frozen=True)
class FileShown:
    """The file a command is about: the example role doc (``offer_role_copy``), the role doc copy to edit
    (``open_role_editor``) or the proposal shown (``/proposals N``)."""

    path: str


@dataclass(frozen=True)
class InboxState:
    """Action ``inbox_state``: the UI redraws its inbox toggle."""

    enabled: bool
    state_text: str


@dataclass(frozen=True)
class HelpColumns:
    """``/help``: (usage, help) rows a UI lays out in two columns at its width."""

    rows: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class RefusedInput:
    """The line was refused as typed (unknown command, bad arguments): a panel gives it back to edit."""


@dataclass(frozen=True)
class ModelChosen:
    """``/model NAME``: the model the next turn uses."""

    model: str


@dataclass(frozen=True)
class SendKeyChosen:
    """``/keys KEY``: the panel's send key, saved."""

    send_key: str


@dataclass(frozen=True)
class UsageCounts:
    """``/stats``: turns of this session, and how many sessions the stats file holds."""

    session: int
    sessions: int


@dataclass(frozen=True)
class SkeletonShown:
    """``/skeleton PATH``: the file's signatures and docstrings."""

    text: str


@dataclass(frozen=True)
class PermissionChanges:
    """``/import`` refused: what the imported config would change in what the agent may do."""

    changes: tuple[str, ...]


class ConsideredNote(TypedDict):
    """One note auto-recall weighed for the last turn."""

    id: str
    score: float | None  # the search's fused score (None when the hit had none)
    channels: dict[str, object]  # each search channel's rank and score
    evidence: dict[str, object]  # what the gate weighed (its relevance among them)
    injected: bool


@dataclass(frozen=True)
class RecallShown:
    """``/recall``: the notes auto-recall injected into the last turn, and every one it weighed."""

    injected: tuple[str, ...]
    considered: tuple[ConsideredNote, ...]


@dataclass(frozen=True)
class ProposedPair:
    """One ``/memory review`` proposal: ``newer`` may supersede (``supersede``) or copy (``merge``) ``older``."""

    older: str
    newer: str
    kind: str


@dataclass(frozen=True)
class ReviewProposals:
    """``/memory review``: the open proposals, numbered from 1 in this order."""

    proposals: tuple[ProposedPair, ...]


@dataclass(frozen=True)
class ReviewAnswered:
    """``/memory review accept|distinct N``: the pair answered and the verdict."""

    older: str
    newer: str
    verdict: str


@dataclass(frozen=True)
class ProposalFiles:
    """``/proposals``: the role-amendment proposal files listed, numbered from 1 in this order."""

    paths: tuple[str, ...]


CommandPayload = Union[
    SendTurn, Confirm, CopyText, FileShown, InboxState, HelpColumns, RefusedInput, ModelChosen, SendKeyChosen,
    UsageCounts, SkeletonShown, PermissionChanges, RecallShown, ReviewProposals, ReviewAnswered, ProposalFiles,
    EvictionResult, CompressReport,
]
