"""Eval case -> segments -> ChatPrompt and question (seeds 000-002)."""
