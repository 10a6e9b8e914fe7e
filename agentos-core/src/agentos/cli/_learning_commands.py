"""``agentos train`` and ``agentos runs``: nothing heavy is imported until a handler runs."""

from __future__ import annotations

import sys
import time

from ._output import add_threads_option


def add_commands(sub) -> None:
    p = sub.add_parser("train", help="train the agent's policy with its trainer; records the run")
    p.add_argument(
        "args",
        nargs="+",
        metavar="[agent.ini] N",
        help="optional agent.ini (default ./agent.ini), then the number of episodes (or steps)",
    )
    p.add_argument("--steps", action="store_true", help="N counts environment steps, not episodes")
    p.add_argument("--seed", type=int, default=None, help="seed of the environment, the policy and the trainer")
    p.add_argument("--quiet", "-q", action="store_true", help="print only the final summary")
    p.add_argument(
        "--from-run", metavar="RUN",
        help="continue a recorded run: its agent.ini, policy checkpoint and trainer state (recorded as parent)",
    )
    p.add_argument("--checkpoint", metavar="FILE", help="start from the policy in this checkpoint file")
    p.add_argument("--force", action="store_true", help="with --from-run: go on even if installed components differ")
    add_threads_option(p)
    p.set_defaults(handler=_train)

    p = sub.add_parser("runs", help="past runs of the agent (runs/ of its folder); 'runs show RUN' prints one")
    p.add_argument("--agent", metavar="AGENT_INI", help="the agent.ini (default ./agent.ini)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=_runs)
    rs = p.add_subparsers(dest="runs_command", metavar="show")
    s = rs.add_parser("show", help="one run: summary, components, lock and files")
    s.add_argument("run", help="run id, unique part of it, 'latest', or the run's folder")
    s.add_argument("--agent", metavar="AGENT_INI", dest="agent_show", help="the agent.ini (default ./agent.ini)")
    s.add_argument("--json", action="store_true", dest="json_show", help="machine-readable output")
    s.set_defaults(handler=_runs_show)


def _parse_budget(values: list[str]) -> tuple[str | None, int]:
    from ..errors import UsageError

    if len(values) > 2:
        raise UsageError(f"too many arguments: {' '.join(values)} (usage: agentos train [agent.ini] N [--steps])")
    *ini, count = values
    try:
        number = int(count.replace("_", ""))
    except ValueError:
        raise UsageError(f"expected a number of episodes (or steps), not {count!r}") from None
    return (ini[0] if ini else None), number


class _Reporter:
    """A rich progress bar on a terminal, else a one-line update every ``interval`` seconds."""

    def __init__(self, total: int, unit: str, *, quiet: bool, interval: float = 5.0):
        self.total, self.unit, self.quiet, self.interval = total, unit, quiet, interval
        self.window: list[float] = []
        self.window_sum = 0.0
        self.steps = 0
        self.started = self.last = time.perf_counter()
        self.progress = None
        if not quiet and sys.stdout.isatty():
            try:
                from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
            except ImportError:
                pass
            else:
                self.progress = Progress(
                    TextColumn("[bold]train"),
                    BarColumn(),
                    MofNCompleteColumn(),
                    TextColumn(unit),
                    TextColumn("{task.fields[rate]} steps/s"),
                    TextColumn("mean100 {task.fields[mean]}"),
                    TimeElapsedColumn(),
                    refresh_per_second=4,
                )
                self.progress.start()
                self.task = self.progress.add_task("train", total=total, rate="-", mean="-")

    def mean100(self) -> float:
        return self.window_sum / len(self.window) if self.window else float("nan")

    def on_episode(self, run, result) -> None:
        self.steps += result.length
        self.window.append(result.episode_return)
        self.window_sum += result.episode_return
        if len(self.window) > 100:
            self.window_sum -= self.window.pop(0)
        if self.quiet:
            return
        now = time.perf_counter()
        if self.progress is not None:
            if now - self.last >= 0.1:
                self._refresh(run, now)
        elif now - self.last >= self.interval:
            self._line(run, now)

    def _done(self, run) -> int:
        return len(run.episodes) if self.unit == "episodes" else self.steps

    def _refresh(self, run, now) -> None:
        from ._output import number

        self.last = now
        rate = _rate(run, now)
        self.progress.update(
            self.task, completed=min(self._done(run), self.total), rate=number(rate), mean=number(self.mean100())
        )

    def _line(self, run, now) -> None:
        from ._output import number

        self.last = now
        rate = _rate(run, now)
        print(
            f"train: {self._done(run):,}/{self.total:,} {self.unit}, episode {len(run.episodes):,}, "
            f"{number(rate)} steps/s, mean return (last 100) {number(self.mean100())}",
            flush=True,
        )

    def close(self, run=None) -> None:
        if self.progress is not None:
            if run is not None:
                self._refresh(run, time.perf_counter())
            self.progress.stop()
            self.progress = None


def _rate(run, now: float) -> float:
    """Steps per second exactly as the run's summary counts them (``Run.steps_per_second``: from the
    run's start to ``now``, or to its summary once it has one, so that the bar's last figure is the
    summary's)."""
    return run.steps_per_second(now)


def _train(args) -> int:
    from .._safe_text import printable
    from ..api import train
    from ._output import agents_line, count, metrics_line, number

    agent_ini, budget = _parse_budget(args.args)
    unit = "steps" if args.steps else "episodes"
    reporter = _Reporter(budget, unit, quiet=args.quiet)
    state = {}

    def on_episode(run, result):
        state["run"] = run
        reporter.on_episode(run, result)

    def on_interrupt():
        print("\nagentos: stopping at the end of this episode (Ctrl-C again to stop now)", file=sys.stderr, flush=True)

    kwargs = {"steps": budget} if args.steps else {"episodes": budget}
    try:
        summary = train(
            agent_ini, seed=args.seed, on_episode=on_episode, on_interrupt=on_interrupt,
            from_run=args.from_run, checkpoint=args.checkpoint, force=args.force, threads=args.threads, **kwargs,
        )
    finally:
        reporter.close(state.get("run"))
    metrics = f"metrics: {metrics_line(summary['metrics'])}" if summary.get("metrics") else ""
    print(
        f"{summary['status']}: {count(summary['episodes'])} episodes, {count(summary['steps'])} steps, "
        f"mean return {number(summary['mean_return'])}, last 100 {number(summary.get('last100_mean'))}, "
        f"{number(summary['steps_per_second'])} steps/s, seed {summary.get('seed')}"
        + (f"; {metrics}" if metrics and args.quiet else "")  # --quiet: the summary is one line
    )
    if metrics and not args.quiet:
        print(metrics)
    if summary.get("agents") and not args.quiet:  # a multi-agent environment: every seat's tally
        print(f"agents: {agents_line(summary['agents'])}")

    if summary.get("evaluation") and not args.quiet:
        print(printable(evaluation_line(summary["evaluation"], summary.get("run"))))
    if summary.get("parent"):
        print(printable(f"continued from run {summary['parent']}"))
    if summary.get("run"):
        print(printable(f"run {summary['run']}: {summary['run_dir']}"))
        if summary.get("checkpoint"):
            print(printable(f"checkpoint: {summary['checkpoint']}  (agentos run --from-run {summary['run']})"))
    return 130 if summary["status"] == "interrupted" else 0


def evaluation_line(evaluation: dict, run: str | None) -> str:
    """``evaluation: 4 evaluations of 5 episodes (seeds 1000000..1000004); best mean 9.50 at step 2,000
    (best.safetensors...)``, and whether training stopped at the reward threshold."""
    from ._output import count, number

    seeds = evaluation.get("seeds") or [0]
    text = (f"evaluation: {count(evaluation.get('evaluations', 0))} evaluations of {len(seeds)} episodes "
            f"(seeds {seeds[0]}..{seeds[-1]})")
    best = evaluation.get("best")
    if isinstance(best, dict):
        text += f"; best mean {number(best.get('mean_return'))} at step {count(best.get('steps', 0))}"
        if best.get("checkpoint"):
            text += f" ({best['checkpoint']}" + (f": agentos run --from-run {run}@best)" if run else ")")
    stopped = evaluation.get("stopped")
    if isinstance(stopped, dict):
        text += f"; stopped at the reward threshold {number(evaluation.get('reward_threshold'))}"
    return text


def _runs(args) -> int:
    from ..api import list_runs
    from ._output import count, dump_json, number, table

    rows = list_runs(args.agent)
    if args.json:
        dump_json(rows)
        return 0
    from .._safe_text import printable_row

    rows = [printable_row(row) for row in rows]
    if not rows:
        print("no runs yet (agentos train and agentos run record them)")
        return 0
    for row in rows:
        row["n"] = count(row["episodes"])
        row["s"] = count(row["steps"])
        row["mean"] = number(row["mean_return"])
        row["m100"] = number(row["last100_mean"])
        row["components"] = " / ".join(filter(None, (row["environment"], row["policy"], row["trainer"])))
    table(
        rows,
        [
            ("id", "RUN"),
            ("mode", "MODE"),
            ("status", "STATUS"),
            ("n", "EPISODES"),
            ("s", "STEPS"),
            ("mean", "MEAN"),
            ("m100", "LAST100"),
            ("components", "COMPONENTS"),
        ],
    )
    return 0


def _runs_show(args) -> int:
    from .._safe_text import printable
    from ..api import show_run
    from ._output import agents_line, count, dump_json, metrics_line, number

    def say(text: str) -> None:  # everything here comes from a record: no escape sequence gets through
        print(printable(text))

    info = show_run(args.run, args.agent_show or args.agent)
    if args.json_show or args.json:
        dump_json(info)
        return 0
    summary = info.get("summary") or {}
    say(f"run {info['id']} ({info['mode']}, {info['status']})")
    say(f"  folder:     {info['directory']}")
    say(f"  started:    {str(info.get('started'))[:19]}  finished: {info.get('finished') or '-'}")
    say(f"  agent.ini:  {info.get('agent_ini')}")
    if info.get("parent"):
        chain = [
            f"{a['id']} ({a.get('status')}, {count(a.get('episodes') or 0)} episodes)" if a["found"]
            else f"{a['id']} (not found)"
            for a in info.get("ancestry") or [{"id": info["parent"], "found": False}]
        ]
        say(f"  parent:     {' <- '.join(chain)}")
    comps = info.get("components", {})
    say("  components: " + ", ".join(f"{k} {v}" for k, v in comps.items()))
    request = [
        f"{k} {count(v) if isinstance(v, int) and not isinstance(v, bool) else v}"
        for k, v in (info.get("request") or {}).items()
        if v not in (None, False)
    ]
    seed = info.get("seed")
    say(f"  request:    {', '.join(request) or '-'}; seed {'-' if seed is None else seed}")
    if info.get("error"):
        say(f"  error:      {info['error']}")
    if summary:
        say(
            f"  result:     {count(summary.get('episodes', 0))} episodes, {count(summary.get('steps', 0))} steps, "
            f"mean return {number(summary.get('mean_return', float('nan')))} "
            f"(min {number(summary.get('min_return', float('nan')))}, "
            f"max {number(summary.get('max_return', float('nan')))}), "
            f"{number(summary.get('steps_per_second', float('nan')))} steps/s, "
            f"{number(summary.get('seconds', float('nan')))} s"
        )
    if info.get("last100_mean") is not None:
        say(f"  last 100:   mean return {number(info['last100_mean'])}")
    if summary.get("metrics"):
        say(f"  metrics:    {metrics_line(summary['metrics'])}")
    if agents_line(summary.get("agents")):
        say(f"  agents:     {agents_line(summary.get('agents'))}")
    if summary.get("evaluation"):
        say(f"  {evaluation_line(summary['evaluation'], None)}")
    say(f"  checkpoint: {info.get('checkpoint') or '-'}")
    lock = info.get("lock") or {}
    for entry in lock.get("components", []):
        sha = str(entry.get("sha256") or "-")[:12]
        say(
            f"  lock:       {entry.get('kind')} {entry.get('name')}: "
            f"{entry.get('package') or entry.get('source') or '-'} "
            f"{entry.get('version') or ''} sha256 {sha} ({entry.get('install')})"
        )
    if lock:
        say(f"  python:     {lock.get('python')}, {len(lock.get('packages', []))} other packages locked")
    say(f"  files:      {', '.join(info['files'])}")
    return 0
