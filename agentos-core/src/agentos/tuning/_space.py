"""The search space and the ``[tune]`` options of an experiment file: data, checked against allowlists.

    [search]                              ; one line per setting: [float|int, low, high(, log)] or [choice, a, b...]
    trainer.alpha = [float, 0.01, 1.0, log]
    trainer.epsilon = [float, 0.0, 0.3]
    policy.kind = [choice, greedy, softmax]

    [search if policy.kind = softmax]     ; conditional settings: sampled only when the choice is that value
    policy.temperature = [float, 0.1, 2.0]

    [tune]
    trials = 30          ; the budget: finished trials in the study (pruned ones count)
    timeout = 600        ; and/or seconds of this driver
    sampler = tpe        ; tpe (default), random, qmc
    pruner = median      ; median (default), median-time, hyperband, successive-halving, none
    reports = 4          ; intermediate evaluations per seed during training (0: between seeds only)
    direction = maximize ; or minimize
    parallel = 2         ; trials at once (default: the executor's slots)
    seed = 0             ; the sampler's seed (with parallel = 1: the same trials every time)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ..config import IniDocument, parse_value
from ..errors import ConfigError, UsageError
from ..host._names import did_you_mean

TUNE_KEYS = {"trials", "timeout", "sampler", "pruner", "direction", "parallel", "seed", "reports"}
DEFAULT_REPORTS = 4
MAX_REPORTS = 1000
SAMPLERS = ("tpe", "random", "qmc")
PRUNERS = ("median", "median-time", "hyperband", "successive-halving", "none")
DIRECTIONS = ("maximize", "minimize")
KINDS = ("float", "int", "choice")
MAX_CHOICES = 100
_CONDITION = re.compile(r"^search\s+if\s+([A-Za-z_][\w.\-]*)\s*=\s*(\S.*?)\s*$")


@dataclass
class Param:
    """One setting's distribution: ``kind`` float/int (``low``, ``high``, ``log``) or choice (``choices``)."""

    name: str
    kind: str
    low: float | None = None
    high: float | None = None
    log: bool = False
    choices: list = field(default_factory=list)
    condition: tuple[str, object] | None = None  # (choice setting, value) it needs

    def suggest(self, trial):
        if self.kind == "float":
            return trial.suggest_float(self.name, self.low, self.high, log=self.log)
        if self.kind == "int":
            return trial.suggest_int(self.name, int(self.low), int(self.high), log=self.log)
        return trial.suggest_categorical(self.name, self.choices)


@dataclass
class SearchSpace:
    params: list[Param]
    options: dict

    def sample(self, trial) -> dict:
        """The settings of one Optuna trial (conditional ones only when their condition holds)."""
        values: dict = {}
        for param in self.params:
            if param.condition is None or values.get(param.condition[0]) == param.condition[1]:
                values[param.name] = param.suggest(trial)
        return values

    def check_fixed(self, values, where: str) -> dict:
        """``values`` (settings to try first: ``tune(..., enqueue=[...])``) checked against the space:
        every key a searched setting, every value one its distribution can give; one clear line if not."""
        if not isinstance(values, dict) or not values:
            raise UsageError(f"{where}: give an object of searched settings and their values")
        params = {p.name: p for p in self.params}
        for name, value in values.items():
            param = params.get(name)
            if param is None:
                raise UsageError(f"{where}: {name!r} is not searched{did_you_mean(str(name), params)}")
            if param.condition is not None and values.get(param.condition[0]) != param.condition[1]:
                raise UsageError(f"{where}: {name} is searched only when {param.condition[0]} = {param.condition[1]}")
            if param.kind == "choice":
                if not any(type(value) is type(c) and value == c for c in param.choices):
                    raise UsageError(f"{where}: {name} = {value!r} is not one of its choices")
                continue
            number = (int,) if param.kind == "int" else (int, float)
            if isinstance(value, bool) or not isinstance(value, number) or not math.isfinite(value) \
                    or not param.low <= value <= param.high:
                raise UsageError(f"{where}: {name} = {value!r} is not a{'n int' if param.kind == 'int' else ' number'} "
                                  f"from {param.low} to {param.high}")
        return dict(values)


def _param(name: str, value, where: str, path: str, line: int) -> Param:
    def fail(message: str):
        raise ConfigError(f"[{where}] {name}: {message}", path, line)

    if not isinstance(value, list) or not value or value[0] not in KINDS:
        fail("give [float, low, high], [int, low, high] (optionally ', log') or [choice, a, b, ...]")
    kind, rest = value[0], value[1:]
    if kind == "choice":
        if not rest:
            fail("a choice needs at least one value")
        if len(rest) > MAX_CHOICES:
            fail(f"at most {MAX_CHOICES} choices")
        if len(set(map(repr, rest))) != len(rest):
            fail("a choice lists a value twice")
        for v in rest:
            if isinstance(v, float) and not math.isfinite(v):
                fail(f"choice {v!r} is not a finite number")
        return Param(name, kind, choices=list(rest))
    log = len(rest) == 3 and rest[2] == "log"
    if len(rest) != 2 + log:
        fail(f"give [{kind}, low, high] or [{kind}, low, high, log]")
    low, high = rest[0], rest[1]
    for bound in (low, high):
        if isinstance(bound, bool) or not isinstance(bound, (int, float)) or not math.isfinite(bound):
            fail(f"bound {bound!r} is not a finite number")
        if kind == "int" and not isinstance(bound, int):
            fail(f"bound {bound!r} of an int setting is not an integer")
    if low > high:
        fail(f"low {low} is above high {high}")
    if log and low <= 0:
        fail(f"a log scale needs low > 0 (got {low})")
    return Param(name, kind, float(low) if kind == "float" else low, float(high) if kind == "float" else high, log)


def _option_problem(key: str, value) -> str | None:
    if key == "seed":
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**32:
            return "seed must be a whole number from 0 to 2**32 - 1"
    elif key in ("trials", "parallel"):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100_000:
            return f"{key} must be a whole number from 1 to 100000"
    elif key == "reports":
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_REPORTS:
            return f"reports must be a whole number from 0 to {MAX_REPORTS}"
    elif key == "timeout":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            return "timeout must be a positive number of seconds"
    elif key == "sampler" and value not in SAMPLERS:
        return f"sampler must be one of {', '.join(SAMPLERS)}"
    elif key == "pruner" and value not in PRUNERS:
        return f"pruner must be one of {', '.join(PRUNERS)}"
    elif key == "direction" and value not in DIRECTIONS:
        return f"direction must be one of {', '.join(DIRECTIONS)}"
    return None


def read_search(path: str) -> SearchSpace:
    """The ``[search]``, ``[search if ...]`` and ``[tune]`` sections of an experiment file, checked."""
    from ..core._presets import setting_problem

    doc = IniDocument.read(path)
    params: list[Param] = []
    options: dict = {}
    conditional = []
    for name, section in doc.sections.items():
        if name == "tune":
            for key, entry in section.entries.items():
                if key not in TUNE_KEYS:
                    raise ConfigError(f"unknown key {key!r} in [tune]{did_you_mean(key, TUNE_KEYS)}", path, entry.line)
                try:
                    value = parse_value(entry.raw)
                except ValueError as exc:
                    raise ConfigError(f"[tune] malformed value for {key!r}: {exc}", path, entry.line) from None
                if key == "pruner" and value is None and entry.raw.strip() == "none":
                    value = "none"  # (the value parser reads ``none`` as None; ``None`` or ``null`` is no pruner)
                if message := _option_problem(key, value):
                    raise ConfigError(f"[tune] {message}", path, entry.line)
                options[key] = value
            continue
        match = _CONDITION.match(name)
        if name != "search" and not match:
            continue  # [experiment], [settings]...: read by read_experiment
        condition = None
        if match:
            try:
                condition = (match.group(1), parse_value(match.group(2)))
            except ValueError as exc:
                raise ConfigError(f"[{name}] malformed condition: {exc}", path, section.line) from None
            conditional.append((name, section.line, condition))
        for key, entry in section.entries.items():
            if message := setting_problem(key):
                raise ConfigError(f"[{name}] {message}", path, entry.line)
            try:
                value = parse_value(entry.raw)
            except ValueError as exc:
                raise ConfigError(f"[{name}] malformed value for {key!r}: {exc}", path, entry.line) from None
            if any(p.name == key for p in params):
                raise ConfigError(f"[{name}] {key} is searched twice", path, entry.line)
            param = _param(key, value, name, path, entry.line)
            param.condition = condition
            params.append(param)
    if not params:
        raise ConfigError("tune needs a [search] section with at least one setting", path)
    for name, line, (key, value) in conditional:
        parent = next((p for p in params if p.name == key and p.kind == "choice" and p.condition is None), None)
        if parent is None or value not in parent.choices:
            raise ConfigError(f"[{name}] the condition needs {key} to be a choice of [search] (not a conditional "
                              "one) with that value", path, line)
    params.sort(key=lambda p: p.condition is not None)  # conditions are sampled before what depends on them
    return SearchSpace(params, options)
