"""``agentos evaluate``: test episodes of a policy on stated seeds, with training off, as a results record.

What is evaluated (:func:`evaluate`):

* an installed policy component (``POLICY``), built with its defaults and the environment's spaces;
* a run's policy (``run=RUN``, in an agent folder): its agent.ini and checkpoint, after the same
  trust checks as ``agentos run --from-run`` (the installed components must match its lock);
* a published package that is not installed here (or any, with ``isolated``): in a fresh virtual
  environment made from the index (:mod:`._isolated`), so nothing of it runs in this one.

Episode ``i`` is seeded ``seed + i``. With ``scheduler`` the seeds are cut into blocks that run on a
Dask cluster (``local``: one on this machine) through :class:`agentos.experiments.DaskExecutor`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..core._tasks import check_task, configured_task, task_problem, task_setting, trained_for
from ..errors import UsageError
from ..host._names import normalize


@dataclass(frozen=True)
class Target:
    """What to evaluate, as plain data (it travels to Dask workers)."""

    environment: str | None
    policy: str | None = None
    run: str | None = None
    agent_ini: str | None = None
    max_episode_steps: int | None = None
    task: str | None = None


def _context(target: Target):
    """(context, run record or None, checkpoint or None) for ``target``."""
    from ..config import AgentConfig
    from ..core._context import AgentContext, use

    if target.run:
        from ..core._paths import agent_ini_path
        from ..learning._from_run import open_run

        path = agent_ini_path(target.agent_ini, "agentos evaluate --run RUN")
        record, context, checkpoint = open_run(path, target.run, force=False, command="evaluate")
        trained_on = context.default_name("environment")
        if target.environment and target.environment != trained_on:
            raise UsageError(f"run {record.id} trained on environment {trained_on!r}, not {target.environment!r}")
        trained_task = configured_task(context)
        if target.task and target.task != trained_task:
            raise UsageError(f"run {record.id} trained on task {trained_task!r}, not {target.task!r}")
        return context, record, checkpoint
    text = f"[environment]\ndefault = {target.environment}\n\n[policy]\ndefault = {target.policy}\n"
    if target.task:
        from ..host import ComponentHost

        setting = task_setting(ComponentHost().load("environment", target.environment))
        if setting is None:
            raise UsageError(f"environment {target.environment!r} plays one game: it takes no --task")
        text += f"\n[environment.{target.environment}]\n{setting} = {target.task}\n"
    return use(AgentContext(AgentConfig.from_text(text, path=os.path.join(os.getcwd(), "agent.ini")))), None, None


def _identity(context, kind: str) -> dict:
    """Name, package and version of the context's ``kind`` (an environment's task too, when it has one)."""
    spec = context.host.spec(kind, context.default_name(kind))
    if not spec.package:
        raise UsageError(f"{kind} {spec.name!r} is local code (source =): records name published packages; "
                         "publish it first")
    identity = {"name": spec.name, "package": spec.package, "version": spec.version}
    task = configured_task(context, spec.name) if kind == "environment" else None
    return {**identity, "task": task} if task else identity


def play_target(target: Target, seeds: list[int]):
    """Build the environment and policy of ``target`` and play one episode per seed (an ``Episodes``)."""
    return evaluate_target(target, seeds)[2]


def evaluate_target(target: Target, seeds: list[int]) -> tuple[dict, dict, object]:
    """The environment's and the policy's identity, and the ``Episodes`` played on ``seeds`` (one context)."""
    from ..learning._commands import _load_checkpoint

    context, record, checkpoint = _context(target)
    try:
        env_id, policy_id = _identity(context, "environment"), _identity(context, "policy")
        policy = context.get("policy")
        if checkpoint is not None:
            _load_checkpoint(policy, checkpoint)
        return env_id, policy_id, play_built(context, policy, seeds, target.max_episode_steps)
    finally:
        context.close()


def play_built(context, policy, seeds: list[int], max_episode_steps: int | None = None):
    """Play ``policy`` on the default environment of ``context``, one episode per seed."""
    from ..learning._commands import episode_step_limit
    from ._play import batched_twin, play, play_batched

    environment = context.get("environment")
    limit = max_episode_steps or episode_step_limit(environment)
    env_name = context.default_name("environment")
    creator = batched_twin(context.host.load("environment", env_name), policy)
    if creator is not None:
        comp = context.config.component("environment", env_name) if context.config else None
        return play_batched(creator, comp.kwargs() if comp else {}, policy, seeds, max_steps=limit)
    return play(environment, policy, seeds, max_steps=limit)


def identities(target: Target) -> tuple[dict, dict]:
    """The environment's and the policy's name, package and version (nothing is built)."""
    context, _, _ = _context(target)
    try:
        return _identity(context, "environment"), _identity(context, "policy")
    finally:
        context.close()


def _blocks(seeds: list[int], parts: int) -> list[list[int]]:
    size = max(1, -(-len(seeds) // max(1, parts)))
    return [seeds[i:i + size] for i in range(0, len(seeds), size)]


def _play_spread(targets: list[Target], seeds: list[int], scheduler: str) -> list:
    """Every target's episodes on ``seeds``, blocks of seeds of every target spread over a Dask cluster."""
    from ..experiments import DaskExecutor
    from ._play import Episodes

    executor = DaskExecutor(scheduler)
    try:
        blocks = _blocks(seeds, max(1, executor.slots() // len(targets)))
        futures = [[executor.submit(play_target, target, block) for block in blocks] for target in targets]
        parts = [[f.result() for f in row] for row in futures]
    finally:
        executor.shutdown()
    merged = []
    for row in parts:
        episodes = Episodes()
        for part in row:  # in seed order, whichever worker finished first
            episodes.returns += part.returns
            episodes.lengths += part.lengths
            episodes.cut += part.cut
            for name, values in part.metrics.items():
                episodes.metrics.setdefault(name, []).extend(values)
        merged.append(episodes)
    return merged


def evaluate_many(policies: list[str], *, environment: str, episodes: int = 100, seed: int = 0,
                  scheduler: str | None = None, max_episode_steps: int | None = None,
                  task: str | None = None, threads: int | None = None) -> list[dict]:
    """Records of several installed policies on the same environment and seeds; with ``scheduler`` every
    policy's blocks of seeds run on the Dask cluster at once."""
    from ..host import ComponentHost, is_valid_name
    from ..learning._commands import use_threads
    from ._record import make_record

    seeds = check_request(episodes, seed)
    use_threads(threads)
    if not policies or not environment:
        raise UsageError("name the policies and --environment")
    host = ComponentHost()
    for name in (*policies, environment):
        if not is_valid_name(name):
            raise UsageError(f"{name[:60]!r} is not a valid component name (letters, digits, '.', '_', '-')")
    missing = [p for p in policies if host.find("policy", p) is None]
    if missing:
        raise UsageError(f"not installed here: {', '.join(missing)} (several policies are evaluated in this "
                         "environment; evaluate a published one alone for a fresh venv)")
    targets = [Target(environment, p, max_episode_steps=max_episode_steps, task=task and check_task(task))
               for p in policies]
    ids = [identities(t) for t in targets]
    played = _play_spread(targets, seeds, scheduler) if scheduler else [play_target(t, seeds) for t in targets]
    return [make_record(env_id, policy_id, seeds, eps) for (env_id, policy_id), eps in zip(ids, played, strict=True)]


def trained_on(policy: str, installed, index_url: str | None) -> dict | None:
    """``{"name", "task"}`` of the environment the trained policy ``policy`` was evaluated on: from its
    installed package's results.json, else from the index's catalogue; None for other policies."""
    if installed:
        return trained_for(installed.package)
    from ..errors import AgentOSError
    from ..registry._client import IndexClient, resolve_index_url

    try:
        catalogue = IndexClient(resolve_index_url(index_url)).catalogue()
    except AgentOSError:
        return None
    for row in catalogue.get("components", []):
        if row.get("kind") == "policy" and normalize(str(row.get("name"))) == normalize(policy):
            release = catalogue.get("projects", {}).get(row.get("project"), {}).get("releases", {})
            env = (release.get(row.get("version"), {}).get("results") or {}).get("environment")
            if isinstance(env, dict) and isinstance(env.get("name"), str):
                task = env.get("task")
                return {"name": env["name"], "task": task if task_problem(task) is None else None}
    return None


def check_request(episodes: int, seed: int) -> list[int]:
    from ._record import MAX_EPISODES

    if isinstance(episodes, bool) or not isinstance(episodes, int) or not 1 <= episodes <= MAX_EPISODES:
        raise UsageError(f"--episodes must be 1-{MAX_EPISODES:,}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32 - MAX_EPISODES:
        raise UsageError("--seed must be an integer from 0 to 2**32 - 100,001")
    return list(range(seed, seed + episodes))


def evaluate(
    policy: str | None = None,
    *,
    environment: str | None = None,
    episodes: int = 100,
    seed: int = 0,
    run: str | None = None,
    agent_ini: str | None = None,
    out: str | None = None,
    scheduler: str | None = None,
    index_url: str | None = None,
    isolated: bool = False,
    max_episode_steps: int | None = None,
    task: str | None = None,
    echo=None,
    threads: int | None = None,
) -> dict:
    """Play ``episodes`` test episodes (episode ``i`` seeded ``seed + i``) and return the results record.

    Give ``policy`` (an installed policy, or with ``isolated`` / when not installed, a published
    one, evaluated in a fresh venv from ``index_url``) and ``environment``, or ``run`` (a run of the
    agent at ``agent_ini``). ``out`` writes the record there (atomically). ``scheduler`` (a Dask
    address or ``local``) spreads blocks of seeds over a cluster. A trained policy plays the environment
    and task it was trained on unless ``environment`` / ``task`` (e.g. ``CartPole-v1``) say otherwise.
    ``threads``: torch's CPU threads (else ``$OMP_NUM_THREADS``, else one; a fresh venv inherits the choice).
    """
    from ..host import ComponentHost, is_valid_name
    from ..learning._commands import use_threads
    from ._record import make_record, write_record

    seeds = check_request(episodes, seed)
    use_threads(threads)
    if max_episode_steps is not None and max_episode_steps < 1:
        raise UsageError("--max-episode-steps must be at least 1")
    if (policy is None) == (run is None):
        raise UsageError("name a policy to evaluate, or --run RUN (not both)")
    for what, name in (("policy", policy), ("environment", environment)):
        if name is not None and not is_valid_name(name):
            raise UsageError(f"{name[:60]!r} is not a valid {what} name (letters, digits, '.', '_', '-')")
    if task is not None:
        check_task(task)
    installed = policy is not None and ComponentHost().find("policy", policy)
    if policy is not None:
        trained = trained_on(policy, installed, index_url)
        if not environment and trained is None:
            raise UsageError("say which environment: --environment NAME")
        environment = environment or trained["name"]
        if not is_valid_name(environment):  # a name read from the index's catalogue: checked as any other
            raise UsageError(f"{environment[:60]!r} is not a valid environment name")
        if task is None and trained and normalize(trained["name"]) == normalize(environment):
            task = trained["task"]  # the task it was trained on
    if policy is not None and (isolated or not installed):
        from ._isolated import evaluate_in_venv

        record = evaluate_in_venv(policy, environment, episodes, seed, index_url=index_url,
                                  max_episode_steps=max_episode_steps, task=task, echo=echo)
    else:
        target = Target(environment, policy, run, agent_ini and os.path.abspath(agent_ini), max_episode_steps, task)
        if scheduler:
            env_id, policy_id = identities(target)
            (played,) = _play_spread([target], seeds, scheduler)
        else:
            env_id, policy_id, played = evaluate_target(target, seeds)
        if played.cut and echo is not None:
            echo(f"note: {played.cut} episodes did not end within the step limit and were cut")
        record = make_record(env_id, policy_id, seeds, played)
    if out:
        write_record(record, out)
    return record
