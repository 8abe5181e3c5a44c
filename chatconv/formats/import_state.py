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

    def knows_any(self, conversation_ids) -> bool:
        """Whether any of `conversation_ids` (a collection) is known: at C speed, for a batch's thousands."""
        return not (self.names.keys().isdisjoint(conversation_ids) and self.next_steps.keys().isdisjoint(conversation_ids))

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

    def add_new(self, names: dict[str, dict[str, str]], next_steps: dict[str, int]) -> None:
        """The state of conversations this state does not know, each in the order read: their
        tool names and next steps by id (a conversation may have one and not the other), as
        names_of and set_next_step would leave it, taken at once."""
        for held, new in ((self.names, names), (self.next_steps, next_steps)):
            held.update(new)
            for _ in range(len(held) - CONVERSATION_WINDOW):
                held.popitem(last=False)

    def add_read(self, conversation_id: str, names: dict[str, str], next_step: int) -> None:
        """A conversation this state does not know, read whole: its tool names (the dict becomes
        this state's) and its next step, as names_of and set_next_step would leave them."""
        self.names[conversation_id] = names
        if len(self.names) > CONVERSATION_WINDOW:
            self.names.popitem(last=False)
        self.set_next_step(conversation_id, next_step)

    def set_next_step(self, conversation_id: str, step: int) -> None:
        self.next_steps[conversation_id] = step
        while len(self.next_steps) > CONVERSATION_WINDOW:
            self.next_steps.popitem(last=False)
