"""``agentos publish --run RUN --name NAME``: a run's trained policy as a pip package, evaluated first.

Steps, each refusing with one line: find the run and check it as received data (its lock must match
the installed components, its checkpoint the hash run.json recorded); the policy must save
safetensors; copy (or quantize) the weights; build the policy exactly as the installed package
will (:func:`~agentos.results._trained.build_policy` on the shipped file) and play the test
episodes; write the model card and the wheel (:mod:`._wheel`); publish it through
:func:`agentos.registry.publish_files`, so every check of the index applies (names, owners,
versions, the per-file limit :data:`~agentos.registry._limits.MAX_TRAINED_FILE`).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile

from ..errors import UsageError

GIF_MAGIC = (b"GIF87a", b"GIF89a")


def _check_gif(path: str) -> None:
    try:
        with open(path, "rb") as f:
            magic = f.read(6)
    except OSError as exc:
        raise UsageError(f"--replay {path}: {exc.strerror or exc}") from None
    if magic not in GIF_MAGIC:
        raise UsageError(f"--replay {path}: not a GIF file")


#: Pictures a recorded replay keeps at most (a long 2048 game keeps one move in N).
REPLAY_FRAMES = 400


def _record_replay(context, policy, seed: int, length: int, work: str, echo) -> bool:
    """One test episode (seed ``seed``) of the shipped policy as ``work/replay.gif``; False (and a note)
    when the environment cannot draw itself or imageio is missing."""
    from ..errors import AgentOSError
    from ..learning._replay import record_episodes

    try:
        environment = context.create("environment", context.default_name("environment"), render_mode="rgb_array")
    except Exception as exc:  # an environment without rgb_array pictures: no replay, said once
        echo(f"note: no replay.gif (the environment cannot draw rgb_array pictures: {type(exc).__name__})")
        return False
    try:
        policy.seed(seed)
        policy.reset()
        record_episodes(policy, environment, os.path.join(work, "replay.gif"), episodes=1, seed=seed,
                        every=max(1, -(-length // REPLAY_FRAMES)))
    except AgentOSError as exc:
        echo(f"note: no replay.gif ({exc})")
        return False
    except Exception as exc:  # the environment's own drawing failed (say, CartPole without pygame): no replay
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        echo(f"note: no replay.gif (the environment could not draw its pictures: {type(exc).__name__}: {first})")
        return False
    finally:
        environment.close()
    return True


def _settings(context) -> dict:
    name = context.default_name("policy")
    comp = context.config.component("policy", name) if context.config else None
    settings = comp.kwargs() if comp else {}
    def plain(value) -> bool:
        return value is None or isinstance(value, str | int | float | bool)

    for key, value in settings.items():
        if not (plain(value) or isinstance(value, list | tuple) and len(value) <= 64 and all(map(plain, value))):
            raise UsageError(f"policy setting {key!r} is not a plain value or list of them; cannot ship it")
    return settings


def _copy_bounded(source: str, target: str, what: str) -> None:
    from ..registry._limits import MAX_TRAINED_FILE

    if os.path.islink(source) or not os.path.isfile(source):
        raise UsageError(f"{what} {source} is not a plain file")
    if os.path.getsize(source) > MAX_TRAINED_FILE:
        raise UsageError(f"{what} {source} is over the per-file limit of {MAX_TRAINED_FILE:,} bytes (MAX_TRAINED_FILE)")
    shutil.copyfile(source, target)


def _training(record, lock: dict, context) -> tuple[dict, list[dict]]:
    summary = record.meta.get("summary") or {}
    request = record.meta.get("request") or {}
    budget = (f"{request['episodes']} episodes" if request.get("episodes") else
              f"{request['steps']} steps" if request.get("steps") else None)
    training = {"run": record.id, "seed": record.meta.get("seed"), "budget": budget,
                "episodes": summary.get("episodes"), "steps": summary.get("steps"),
                "last100_mean": summary.get("last100_mean"), "trainer": context.default_name("trainer"),
                "policy": context.default_name("policy")}
    components = [c for c in lock.get("components", []) if isinstance(c, dict)]
    return training, components


def publish_run(
    run: str,
    name: str,
    *,
    index: str | None = None,
    agent_ini: str | None = None,
    episodes: int = 100,
    seed: int = 0,
    version: str = "1.0.0",
    quantize: str | None = None,
    replay: str | None = None,
    record_replay: bool = True,
    keep: str | None = None,
    echo=None,
) -> dict:
    """Publish run ``run``'s policy as ``agentos-policy-<name>`` ``version`` into ``index``.

    Returns ``{"wheel", "project", "version", "record", "published"}`` (``published``: the
    registry's rows). ``quantize="float16"`` ships float16 weights; the evaluation is of them.
    ``replay`` is a GIF of one test episode to ship; without it, one is recorded (``record_replay``)
    when the environment draws ``rgb_array`` pictures and imageio is installed. ``keep`` copies the
    wheel into that folder."""
    from packaging.version import InvalidVersion, Version

    from ..core._paths import agent_ini_path
    from ..host import distribution_name, is_valid_name
    from ..learning._from_run import open_run
    from ..learning._records import file_sha256
    from ..registry import publish_files
    from ..registry._publish import index_dir
    from ..reproduce._training import training_info
    from ._card import model_card
    from ._evaluate import _identity, check_request, play_built
    from ._record import make_record, write_record
    from ._trained import WEIGHTS, build_policy, converts
    from ._weights import check_weights
    from ._weights import quantize as quantize_weights
    from ._wheel import import_name, init_source, write_wheel

    echo = echo or (lambda message: None)
    if not is_valid_name(name) or not import_name(name).isidentifier():
        raise UsageError(f"{name[:60]!r} is not a valid policy name (letters, digits, '_', '-'; e.g. 2048_master)")
    try:
        version = str(Version(version))
    except InvalidVersion:
        raise UsageError(f"--version {version[:40]!r} is not a version (e.g. 1.0.0)") from None
    seeds = check_request(episodes, seed)
    if replay:
        _check_gif(replay)
    root = index_dir(index)
    path = agent_ini_path(agent_ini, "agentos publish --run RUN")
    record, context, checkpoint = open_run(path, run, force=False, command="publish")
    try:
        from ..learning._from_run import checkpoint_choice

        recorded = record.meta.get(f"{checkpoint_choice(run)[1]}_sha256")  # RUN@best: the best checkpoint's
        convert = not checkpoint.endswith(".safetensors")
        if convert and not converts(context.host.load("policy", context.default_name("policy"))):
            policy_name = context.default_name("policy")
            suffix = os.path.splitext(checkpoint)[1] or "a file"
            raise UsageError(f"policy {policy_name!r} saves its checkpoint as {suffix}, not safetensors, "
                             "and has no save_safetensors/load_safetensors; "
                             "trained packages ship safetensors only (never pickles)")
        if recorded is not None and recorded != file_sha256(checkpoint):
            raise UsageError(f"run {record.id}: its checkpoint was changed after training (its sha256 differs from "
                             "the one run.json recorded); refused")
        if recorded is None and checkpoint_choice(run)[1] == "best_checkpoint":  # they came in one release
            raise UsageError(f"run {record.id}: its run.json names a best checkpoint without its sha256; refused")
        if recorded is None:
            echo(f"note: run {record.id} recorded no checkpoint hash (an older agentos); "
                 "its weights are checked as data only")
        if not convert:  # over the per-file limit is fine when --quantize makes it fit (the shipped file is checked)
            check_weights(checkpoint, max_bytes=(1 << 40) if quantize else None)
        env_id, base = _identity(context, "environment"), _identity(context, "policy")
        lock = record.lock()
        project = distribution_name("policy", name)
        policy_id = {"name": name, "package": project, "version": version}
        request = record.meta.get("request") or {}
        spec = {"base": base, "settings": _settings(context), "run": record.id, "environment": env_id,
                "training": {"seed": record.meta.get("seed"), "episodes": request.get("episodes"),
                             "steps": request.get("steps")}}
        with tempfile.TemporaryDirectory(prefix="agentos-trained-") as work:
            files = {}
            weights = os.path.join(work, WEIGHTS)
            environment = context.get("environment")
            source = checkpoint
            if convert:  # the policy's own (weights-only) format, written again as safetensors
                from ..learning._commands import _load_checkpoint

                trained = context.get("policy")
                _load_checkpoint(trained, checkpoint)
                source = os.path.join(work, "converted.safetensors")
                trained.save_safetensors(source)
            quantized = quantize_weights(source, weights, quantize) if quantize else {}
            if not quantize:
                shutil.copyfile(source, weights)
            check_weights(weights)
            files[WEIGHTS] = weights
            policy = build_policy(spec, weights, environment.observation_space, environment.action_space)
            echo(f"evaluating the shipped weights: {episodes} episodes, seeds {seed}-{seed + episodes - 1}")
            played = play_built(context, policy, seeds)
            for member in ("lock.json", "agent.ini", "returns.csv", "returns.png"):
                if os.path.isfile(record.path(member)):
                    files[member] = os.path.join(work, member)
                    _copy_bounded(record.path(member), files[member], member)
            if replay:
                files["replay.gif"] = os.path.join(work, "replay.gif")
                _copy_bounded(replay, files["replay.gif"], "--replay")
            elif record_replay and _record_replay(context, policy, seed, played.lengths[0], work, echo):
                files["replay.gif"] = os.path.join(work, "replay.gif")
            trained_with = training_info(record, lock, context.host.load("trainer", context.default_name("trainer")))
            files["training.json"] = os.path.join(work, "training.json")
            with open(files["training.json"], "w") as handle:
                json.dump(trained_with, handle, indent=2, sort_keys=True)
            shipped_replay = "replay.gif" if "replay.gif" in files else None
            results = make_record(env_id, policy_id, seeds, played, replay=shipped_replay)
            files["results.json"] = os.path.join(work, "results.json")
            write_record(results, files["results.json"])
            training, components = _training(record, lock, context)
            training.update(parents=[p["run"] for p in trained_with["parents"]], package_spec=f"{name}=={version}")
            readme = model_card(name=name, version=version, record=results, training=training, components=components,
                                settings=spec["settings"], quantized=quantized, replay=bool(shipped_replay))
            played = f"{env_id['name']} {env_id['task']}" if env_id.get("task") else env_id["name"]
            summary = (f"Trained {base['name']} policy for {played}: mean return {results['mean']:.6g} "
                       f"over {results['episodes']} test episodes (agentos publish --run)")
            from .._version import __version__

            requires = [f"agentos-core>={__version__}", f"{base['package']}=={base['version']}"]
            out = os.path.join(work, "dist")
            os.makedirs(out)
            wheel = write_wheel(out, name=name, version=version, summary=summary, requires=requires, files=files,
                                init=init_source(summary, spec), readme=readme)
            published = publish_files([wheel], root)
            kept = None
            if keep:
                os.makedirs(keep, exist_ok=True)
                kept = shutil.copy(wheel, keep)
        return {"wheel": kept or os.path.basename(wheel), "project": project, "version": version, "record": results,
                "published": published, "index": root}
    finally:
        context.close()


__all__ = ["publish_run"]
