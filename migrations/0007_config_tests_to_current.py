"""0007: a `tests`-era config (`.agentv/config.yaml` of AgentV v3 to v4.42) as the current era
takes it. Its keys mean the same in the current era, bar two that current AgentV refuses in a
config's `execution` and gives no home: `trace_file` ("unsupported execution field") and
`otel_file` ("has been removed"; its loader then refuses every eval file under the config).
They are refused with AgentV's advice, never dropped. `guideline_patterns`, which current
AgentV passes over with a warning, is kept: chatconv still reads it.
"""

from chatconv.kinds import config_era
from chatconv.migrate import refusal

KINDS = ("config",)
ERAS = ("tests", "current")
SUMMARY = "tests-era config (v3-v4.42) -> current: execution.trace_file and otel_file have no home (refused)"

_NO_HOME = {
    "trace_file": "current AgentV refuses it (\"unsupported execution field\"; a run's traces are part of its run "
                  "artifacts under .agentv/results/): remove it, then migrate",
    "otel_file": "current AgentV has removed it, and refuses every eval file under a config that has it (\"the "
                 "system under test or provider should emit OpenTelemetry/OpenInference traces directly\"): "
                 "remove it, then migrate",
}


def detect(record):
    execution = record.get("execution") if isinstance(record, dict) else None
    if not isinstance(execution, dict) or config_era(record).NAME != "tests":
        return None
    return next((("execution", key) for key in execution if key in _NO_HOME), None)


def upgrade(record):
    path = detect(record)
    others = [key for key in record["execution"] if key in _NO_HOME and key != path[-1]]
    also = "".join(f"; and execution.{key}: {_NO_HOME[key]}" for key in others)  # every one, at once
    raise refusal(path, _NO_HOME[path[-1]] + also)
