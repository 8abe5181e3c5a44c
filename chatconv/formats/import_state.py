"""What import carries from record to record: per conversation, the tool names of its calls by
id (a later record's results are named after them) and the number its next step takes."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from ..pairing import CONVERSATION_WINDOW


@dataclass
class ImportState:
    """What import carries from record to record, per conversation: the tool names of its calls
    by id (of the CONVERSATION_WINDOW most recently read that made calls), and the number its next
    step takes (of the CONVERSATION_WINDOW most recently read: a conversation continued by a later
    record numbers its steps on, as validate expects)."""

    names: OrderedDict[str, dict[str, str]] = field(default_factory=OrderedDict)
    next_steps: OrderedDict[str, int] = field(default_factory=OrderedDict)

    def knows(self, conversation_id: str) -> bool:
        return conversation_id in self.names or conversation_id in self.next_steps

    def knows_any(self, conversation_ids) -> bool:
        """Whether any of `conversation_ids` (a collection) is known: at C speed, for a batch's thousands."""
        return not (self.names.keys().isdisjoint(conversation_ids)
                    and self.next_steps.keys().isdisjoint(conversation_ids))

    def names_of(self, conversation_id: str) -> dict[str, str]:
        """The tool names of a conversation's calls so far: the dict held (now the most recent),
        or a new one, held once add_names gives it some."""
        if conversation_id in self.names:
            self.names.move_to_end(conversation_id)
            return self.names[conversation_id]
        return {}

    def add_names(self, conversation_id: str, names: dict[str, str]) -> None:
        """`names` as the conversation's tool names: the dict names_of gave (held from now on
        when it gained names), or another's (a worker's) added to those held."""
        held = self.names.get(conversation_id)
        if held is not None:
            self.names.move_to_end(conversation_id)
            if held is not names:
                held.update(names)
        elif names:
            self._hold(conversation_id, names)

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
        this state's) and its next step, as add_names and set_next_step would leave them."""
        if names:
            self._hold(conversation_id, names)
        self.set_next_step(conversation_id, next_step)

    def _hold(self, conversation_id: str, names: dict[str, str]) -> None:
        self.names[conversation_id] = names
        if len(self.names) > CONVERSATION_WINDOW:
            self.names.popitem(last=False)

    def set_next_step(self, conversation_id: str, step: int) -> None:
        self.next_steps[conversation_id] = step
        while len(self.next_steps) > CONVERSATION_WINDOW:
            self.next_steps.popitem(last=False)
