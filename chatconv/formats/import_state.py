"""What import carries from record to record: per conversation, the tool names of its calls by
id (a later record's results are named after them) and the number its next step takes."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from ..pairing import CONVERSATION_WINDOW


@dataclass
class ImportState:
    """What import carries from record to record, per conversation (the CONVERSATION_WINDOW most
    recently read): the tool names of its calls by id, and the number its next step takes (a
    conversation continued by a later record numbers its steps on, as validate expects)."""

    names: OrderedDict[str, dict[str, str]] = field(default_factory=OrderedDict)
    next_steps: OrderedDict[str, int] = field(default_factory=OrderedDict)

    def knows(self, conversation_id: str) -> bool:
        return conversation_id in self.names or conversation_id in self.next_steps

    def names_of(self, conversation_id: str) -> dict[str, str]:
        if conversation_id in self.names:
            self.names.move_to_end(conversation_id)
            return self.names[conversation_id]
        while len(self.names) >= CONVERSATION_WINDOW:
            self.names.popitem(last=False)
        self.names[conversation_id] = {}
        return self.names[conversation_id]

    def take_first_step(self, conversation_id: str) -> int:
        return self.next_steps.pop(conversation_id, 0)

    def add_new(self, after: list[tuple[str, dict[str, str] | None, int | None]]) -> None:
        """The state of conversations this state does not know, each given once, in the order
        read, as (id, tool names or None, next step or None): as names_of and set_next_step would
        leave it, taken at once."""
        self.names.update((i, names) for i, names, _ in after if names is not None)
        self.next_steps.update((i, step) for i, _, step in after if step is not None)
        for held in (self.names, self.next_steps):
            for _ in range(len(held) - CONVERSATION_WINDOW):
                held.popitem(last=False)

    def set_next_step(self, conversation_id: str, step: int) -> None:
        self.next_steps[conversation_id] = step
        while len(self.next_steps) > CONVERSATION_WINDOW:
            self.next_steps.popitem(last=False)
