"""Where guideline patterns were read before chatconv.references and prompt.context: their
names, kept importable from here for code written against this module."""

from ..kinds import CONFIG_FILE_NAMES as CONFIG_NAMES
from ..references import check_patterns, find_config, is_guideline, pattern_problem
from .context import config_patterns

__all__ = ["CONFIG_NAMES", "check_patterns", "config_patterns", "find_config", "is_guideline", "pattern_problem"]
