"""The learning side of the API: ``train``, ``run`` with checkpoints, and the run records.

:mod:`agentos.api` re-exports these functions; the CLI calls them.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

from ..core._paths import agent_ini_path
from ..core._runner import DEFAULT_MAX_EPISODE_STEPS, episode_step_limit
from ..errors import AgentOSError, UsageError
from ._listing import list_runs, show_run

__all__ = [
    "DEFAULT_MAX_EPISODE_STEPS", "episode_step_limit", "latest_training", "list_runs", "run", "show_run", "train",
]


def _start_record(context, path: str, mode: str, *, required: bool = False, **meta):
    """A new run record (None when agent.ini disables records). When the record cannot be written,
    ``required`` (training: its result would be lost) makes that an error before anything runs;
    otherwise a warning."""
    from ..trackers import register_builtin_trackers
    from ._records import RunRecord

    register_builtin_trackers()
    try:
        return RunRecord.create(context, path, mode, **meta)
    except OSError as exc:
        where = exc.filename or "runs/"
        if required:
            raise UsageError(
                f"cannot write the run record in {where}: {exc.strerror or exc} "
                "(the trained policy could not be saved; fix the folder or set [agentos] runs = PATH)"
            ) from None
        print(f"agentos: warning: no run record ({exc})", file=sys.stderr)
        return None


def _one_line(exc: BaseException) -> str:
    """An exception as one line: its type and the first line of its message."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _require_components(agent, path: str) -> None:
    """A missing environment or policy is a usage error before anything starts."""
    from ..core._agent import Agent

    if getattr(agent, "environment", None) is None:
        raise UsageError(f"{path} names no environment: add [environment] default = NAME (e.g. corridor)")
    overridden = type(agent).reset is not Agent.reset and type(agent).advance is not Agent.advance
    if getattr(agent, "policy", None) is None and not overridden:
        raise UsageError(f"{path} names no policy: add [policy] default = NAME (e.g. random)")


def _load_checkpoint(policy, checkpoint: str, trained_by=None) -> None:
    """Load weights into ``policy``; any failure is one line (policies load weights only)."""
    try:
        policy.load(checkpoint)
    except NotImplementedError as exc:
        raise UsageError(f"the policy cannot load checkpoints: {exc}") from None
    except Exception as exc:
        by = f", trained by run {trained_by.id}" if trained_by is not None else ""
        raise UsageError(
            f"cannot load checkpoint {checkpoint}: {_one_line(exc)} (use --fresh to run an untrained policy{by})"
        ) from None


class _StopOnInterrupt:
    """First Ctrl-C: stop at the end of the current episode. Second: stop now (KeyboardInterrupt)."""

    def __init__(self, notify=None):
        self.requested = False
        self.notify = notify
        self._previous = None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame):
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        if self.notify:
            self.notify()

    def saving(self) -> None:
        """From now on Ctrl-C is ignored: the record and the checkpoint are being written."""
        if self._previous is not None:
            signal.signal(signal.SIGINT, signal.SIG_IGN)

    def __exit__(self, *exc):
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
        return False


def train(
    agent_ini: str | None = None,
    *,
    episodes: int | None = None,
    steps: int | None = None,
    seed: int | None = None,
    on_episode=None,
    on_interrupt=None,
    record: bool = True,
    from_run: str | None = None,
    checkpoint: str | None = None,
    force: bool = False,
    threads: int | None = None,
) -> dict:
    """Train the agent of ``agent_ini`` for ``episodes`` episodes or ``steps`` steps.

    Returns a summary dict (with ``run``: the run id, and ``checkpoint``: its path). The first
    Ctrl-C stops at the end of the current episode, a second one at once; either way the policy is
    saved, so the checkpoint is usable. ``on_episode(run, result)`` is called after each episode.

    ``from_run`` continues a recorded run: its agent.ini, its policy's checkpoint and its trainer's
    state (when the trainer saves one), with the same trust rules as ``run(from_run=...)``; the new
    record names it as ``parent``. ``checkpoint`` starts from a checkpoint file instead.

    ``threads``: torch's CPU threads (else agent.ini's ``[agentos] threads``, else ``$OMP_NUM_THREADS``,
    else one; see :func:`agentos.devices.use_torch_threads`). ``run`` takes it too.
    """
    from ..core._context import use
    from ..core._runner import EpisodeResult, Run
    from ..plugins import direct_caller, get_plugin_manager
    from ..trackers._scalars import reporting_to
    from ._evaluation import evaluator_for
    from ._from_run import copy_agent_ini, open_run, run_file

    if (episodes is None) == (steps is None):
        raise UsageError("give a number of episodes, or --steps N")
    budget = episodes if episodes is not None else steps
    if budget < 1:
        raise UsageError("the number of episodes or steps must be at least 1")
    if from_run and checkpoint:
        raise UsageError("give --from-run or --checkpoint, not both")
    path = agent_ini_path(agent_ini, "agentos train PATH")
    source_run = trainer_state = None
    if from_run:
        source_run, context, checkpoint = open_run(path, from_run, force=force, command="train")
        from ._from_run import checkpoint_choice

        if checkpoint_choice(from_run)[1] == "checkpoint":  # RUN@best: the last trainer state is not the best's
            trainer_state = run_file(source_run, "trainer_state")
    else:
        context = use(path)
    if checkpoint is not None and not os.path.isfile(checkpoint):
        raise UsageError(f"no such checkpoint: {checkpoint}")
    seed = _default_seed(seed, context)
    use_threads(threads, context)
    try:
        agent = context.build_agent()
        if getattr(agent, "trainer", None) is None:
            raise UsageError(f"{path} names no trainer: add [trainer] default = NAME (e.g. sarsa, dqn_sgd, sb3)")
        _require_components(agent, path)
        if agent.policy is not None:
            agent.policy.seed(seed)
        if checkpoint is not None:
            _load_checkpoint(agent.policy, checkpoint)
        if trainer_state is not None and os.path.isfile(trainer_state):
            _load_trainer_state(agent.trainer, trainer_state)
        evaluator = evaluator_for(context, agent, seed)  # [train] eval_every_*: None when off
        request = {"episodes": episodes, "steps": steps}
        if source_run is not None or checkpoint is not None:
            request.update(
                from_run=source_run.id if source_run else None,
                checkpoint=os.path.abspath(checkpoint),
                force=force,
            )
        rec = _start_record(context, path, "train", required=True, seed=seed, request=request) if record else None
        if rec is not None and source_run is not None:
            copy_agent_ini(source_run, rec)
            rec.meta["parent"] = source_run.id  # the curve continues from there (agentos runs show)
            rec.write()
        hook = get_plugin_manager().hook
        run = Run(agent=agent, mode="train", seed=seed, config_path=path, extra={"record": rec} if rec else {})
        hook.agentos_run_start(run=run)
        episode_end = direct_caller(hook.agentos_episode_end)  # once per episode: the cheap way
        episodes_list = run.episodes
        if evaluator is not None:
            evaluator.start(rec, run)

        with _StopOnInterrupt(on_interrupt) as stop, reporting_to(run):

            def callback(episode_return, length, *args, **kwargs):
                result = EpisodeResult(float(episode_return), int(length))
                info = kwargs.get("info")
                agent_returns = info.get("agent_returns") if isinstance(info, dict) else None  # multi-agent
                if isinstance(agent_returns, dict):
                    result.returns = {str(a): float(r) for a, r in agent_returns.items()}
                episodes_list.append(result)
                if episode_end is not None:
                    episode_end(
                        run=run,
                        episode=len(episodes_list) - 1,
                        episode_return=result.episode_return,
                        length=result.length,
                        info=kwargs.get("info") or {},
                    )
                if on_episode is not None:
                    on_episode(run, result)
                if evaluator is not None and evaluator.after_episode(result.length):
                    return False  # the reward threshold is reached
                return not stop.requested

            status, error = "finished", None
            try:
                agent.train(episodes=episodes, steps=steps, seed=seed, callback=callback)
                if stop.requested:
                    status = "interrupted"
            except KeyboardInterrupt:
                status = "interrupted"
            except BaseException as exc:
                status, error = "failed", _one_line(exc)
                raise
            finally:
                stop.saving()
                if evaluator is not None:
                    evaluator.close()
                summary = _finish_training(rec, run, agent, hook, status, error, evaluator)
        if summary.get("checkpoint_error"):
            raise AgentOSError(f"the trained policy could not be saved: {summary['checkpoint_error']}")
        if summary["status"] == "failed":  # a tracker failed at the end (a full disk): the record says so
            raise AgentOSError(f"run {summary['run']} failed: {summary.get('error')}")
        return summary
    finally:
        context.close()


def _load_trainer_state(trainer, path: str) -> None:
    """Give the trainer the state it saved (``Trainer.load``); any failure is one line."""
    try:
        trainer.load(path)
    except NotImplementedError:
        return  # this trainer keeps no state: the policy's checkpoint is all there is
    except Exception as exc:
        raise UsageError(f"cannot load trainer state {path}: {_one_line(exc)}") from None


def _finish_training(rec, run, agent, hook, status: str, error: str | None, evaluator=None) -> dict:
    """Save the policy, tell the trackers, and end the record (whatever happened during training)."""
    checkpoint = checkpoint_error = None
    if rec is not None:
        try:
            checkpoint = rec.save_checkpoint(agent.policy)
            if callable(getattr(agent.trainer, "save", None)):  # state to continue from (train --from-run)
                rec.save_checkpoint(agent.trainer, name="trainer", key="trainer_state")
        except Exception as exc:
            checkpoint_error = _one_line(exc)
    summary = run.summary(status)
    summary.update(run=rec.id if rec else None, run_dir=rec.directory if rec else None, checkpoint=checkpoint)
    taken = getattr(agent.trainer, "steps_taken", None)  # every step, the unfinished last episodes' too
    if isinstance(taken, int) and not isinstance(taken, bool):
        summary["steps_taken"] = taken
    if rec is not None and rec.meta.get("parent"):
        summary["parent"] = rec.meta["parent"]
    if evaluator is not None:
        summary["evaluation"] = evaluator.summary()
    if error:
        summary["error"] = error
    if checkpoint_error:
        summary["checkpoint_error"] = checkpoint_error
    try:
        hook.agentos_run_end(run=run, summary=summary)
    except Exception as exc:  # a tracker failing (a full disk) still ends the record
        summary.setdefault("error", f"tracker: {_one_line(exc)}")
        if summary["status"] == "finished":
            summary["status"] = "failed"
    if rec is not None:
        try:
            rec.finish(summary)
        except OSError as exc:
            summary["checkpoint_error"] = summary.get("checkpoint_error") or f"run.json: {_one_line(exc)}"
    return summary


def run(
    agent_ini: str | None = None,
    *,
    episodes: int = 10,
    seed: int | None = None,
    on_episode=None,
    from_run: str | None = None,
    checkpoint: str | None = None,
    force: bool = False,
    record: bool | str | os.PathLike = True,
    fresh: bool = False,
    n_envs: int = 1,
    vector_mode: str = "sync",
    max_episode_steps: int | None = None,
    threads: int | None = None,
) -> dict:
    """Run the agent for ``episodes`` episodes; returns a summary (with ``run``, the record's id).

    ``n_envs > 1`` steps that many environments together (see :mod:`agentos.learning._vector`).
    ``max_episode_steps`` ends an episode the environment has not ended after that many steps (the
    summary counts them in ``episodes_cut``); by default the environment's own limit
    (``spec.max_episode_steps``) or else :data:`DEFAULT_MAX_EPISODE_STEPS`.

    ``record``: True writes the run record (runs/), False does not; a file name (``"game.gif"``, or
    ``.mp4`` with imageio-ffmpeg) writes the record and a replay of the episodes, drawn from the
    environment made with ``render_mode="rgb_array"`` (see :mod:`agentos.learning._replay`; the
    summary's ``replay`` says what was written).

    ``checkpoint`` loads a saved policy into the agent's policy. ``from_run`` reuses a recorded run:
    its agent.ini (resolved in the agent's folder) and its checkpoint; it refuses when the installed
    component packages differ from the run's lock, unless ``force``. Otherwise the policy trained
    by the newest ``agentos train`` of the same environment and policy (same packages, versions and
    settings) is used, as a user expects after training; ``fresh`` runs an untrained policy instead.
    """
    from ..core._context import use
    from ..core._runner import run_agent
    from ._from_run import copy_agent_ini, open_run

    if episodes < 1:
        raise UsageError("--episodes must be at least 1")
    if n_envs < 1:
        raise UsageError("--n-envs must be at least 1")
    if max_episode_steps is not None and max_episode_steps < 1:
        raise UsageError("--max-episode-steps must be at least 1")
    if from_run and checkpoint:
        raise UsageError("give --from-run or --checkpoint, not both")
    replay = None
    if not isinstance(record, bool):
        from ._replay import check_replay_path

        replay, record = check_replay_path(record), True
        if n_envs > 1:
            raise UsageError("--record plays one environment: drop --n-envs")
    path = agent_ini_path(agent_ini, "agentos run PATH")
    source_run = None
    if from_run:
        source_run, context, checkpoint = open_run(path, from_run, force=force)
    else:
        context = use(path)
    trained_by = None
    if source_run is None and checkpoint is None and not fresh:
        trained_by = latest_training(context)
        checkpoint = trained_by.checkpoint_path() if trained_by else None
    seed = _default_seed(seed, context)
    use_threads(threads, context)
    if checkpoint is not None and not os.path.isfile(checkpoint):
        raise UsageError(f"no such checkpoint: {checkpoint}")
    try:
        if replay is not None:
            _rendering_environment(context)
        agent = context.build_agent()
        _require_components(agent, path)
        if n_envs > 1 and hasattr(agent, "policies"):
            raise UsageError("--n-envs runs single-agent environments only (this one is multi-agent)")
        if checkpoint is not None:
            _load_checkpoint(agent.policy, checkpoint, trained_by)
        max_episode_steps = max_episode_steps or episode_step_limit(agent.environment)
        rec = None
        if record:
            rec = _start_record(
                context,
                path,
                "run",
                seed=seed,
                request={
                    "episodes": episodes,
                    "from_run": source_run.id if source_run else None,
                    "trained_by": trained_by.id if trained_by else None,
                    "checkpoint": os.path.abspath(checkpoint) if checkpoint else None,
                    "force": force,
                    "max_episode_steps": max_episode_steps,
                },
            )
        if rec is not None:
            if source_run is not None:
                copy_agent_ini(source_run, rec)
            from ..trackers import attach_to_next_run

            attach_to_next_run(record=rec)
        try:
            if n_envs > 1:  # batched environments: agentos.learning._vector
                from ._vector import run_batched

                summary = run_batched(
                    context, agent, n_envs, vector_mode, episodes, seed=seed, config_path=path, on_episode=on_episode,
                    max_episode_steps=max_episode_steps,
                )
            elif replay is not None:
                from ._replay import recording

                with recording(agent.environment, replay) as writer:
                    summary = run_agent(
                        agent, episodes, seed=seed, config_path=path, on_episode=on_episode,
                        max_episode_steps=max_episode_steps,
                    )
                summary["replay"] = writer.result
            else:
                summary = run_agent(
                    agent, episodes, seed=seed, config_path=path, on_episode=on_episode,
                    max_episode_steps=max_episode_steps,
                )
        except BaseException as exc:
            if rec is not None:
                rec.fail(_one_line(exc), "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed")
            raise
        if rec is not None:
            if getattr(agent.policy, "learns_while_running", False):
                summary["checkpoint"] = rec.save_checkpoint(agent.policy)
            summary.update(run=rec.id, run_dir=rec.directory)
        if trained_by is not None:
            summary["trained_by"] = trained_by.id
            summary["trained_by_status"] = trained_by.meta.get("status")
        if rec is not None:
            rec.finish(summary)
        return summary
    finally:
        context.close()


def _rendering_environment(context) -> None:
    """Make the agent's environment with ``render_mode="rgb_array"`` (agentos run --record)."""
    name = context.default_name("environment")
    if name is None:
        raise UsageError("no default environment: set one in agent.ini ([environment] default = NAME)")
    key = context.host.spec("environment", name).key
    try:
        context.instances[key] = context.create("environment", name, render_mode="rgb_array")
    except Exception as exc:  # a component's own error, whatever its type: one line
        raise UsageError(f"environment {name} cannot be made with render_mode='rgb_array' "
                         f"({_one_line(exc)}): it cannot be recorded") from None


def latest_training(context):
    """The newest training record with a checkpoint whose environment and policy match ``context``'s."""
    from ..config import AgentConfig
    from ._records import list_records, runs_dir

    def identity(config):
        parts = []
        for kind in ("environment", "policy"):
            name = config.default(kind)
            comp = config.component(kind, name) if name else None
            parts.append((name, comp.package, comp.version, comp.source, comp.kwargs()) if comp else (name,))
        return parts

    if context.config is None:
        return None
    wanted = identity(context.config)
    for rec in reversed(list_records(runs_dir(context.config))):
        try:
            checkpoint = rec.checkpoint_path()
        except UsageError:  # a link, or a name that is not a file of the run folder: not a policy to play
            continue
        if rec.meta.get("mode") != "train" or not checkpoint or not os.path.isfile(checkpoint):
            continue
        if rec.meta.get("status") == "failed":  # (diverged weights, a crash): not a policy to play
            continue
        try:
            with open(rec.path("agent.ini"), encoding="utf-8") as f:
                recorded = AgentConfig.from_text(f.read(), path=rec.path("agent.ini"))
            if recorded.default("preset"):  # compare what ran: the preset's components filled in
                from ..core._presets import expand_preset

                recorded = expand_preset(recorded)
        except (OSError, UsageError):
            continue
        if identity(recorded) == wanted:
            return rec
    return None


def _default_seed(seed, context) -> int:
    """``--seed`` wins; else agent.ini's ``[agentos] seed``; else a seed drawn now (and recorded), so
    that every run can be reproduced."""
    if seed is not None:
        return seed
    value = context.config.meta_value("seed") if context.config is not None else None
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        where = getattr(context.config, "meta_path", context.config.path)  # a received run's: the user's file
        raise UsageError(f"{where}: [agentos] seed must be an integer, not {value!r}")
    if value is None:
        import secrets

        value = secrets.randbelow(2**31)
    return value


def use_threads(threads, context=None) -> int | None:
    """torch's CPU threads for this process, before any component is built: ``threads``, else the
    agent's ``[agentos] threads``, else ``$OMP_NUM_THREADS``, else one."""
    from ..devices import check_threads, use_torch_threads

    where = "--threads"
    if threads is None and context is not None and context.config is not None:
        threads = context.config.meta_value("threads")
        where = f"{getattr(context.config, 'meta_path', context.config.path)}: [agentos] threads"
    try:
        return use_torch_threads(check_threads(threads))
    except ValueError as exc:
        raise UsageError(f"{where}: {exc}") from None
