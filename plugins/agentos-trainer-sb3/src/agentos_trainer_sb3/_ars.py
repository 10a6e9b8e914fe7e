"""ARS scores candidates with ``evaluate_policy`` and calls ``callback.on_step()`` without the step's
infos and without heeding ``False``: :func:`heed_callbacks` gives it both. ARS then stops at the end of
the update in which the callback said stop (whole candidate episodes: more steps than asked)."""

from __future__ import annotations

__all__ = ["heed_callbacks"]


def heed_callbacks(model) -> None:
    """Patch ``model`` once; every call readies it for one more ``learn``."""
    if hasattr(model, "_agentos_stop"):
        model._agentos_stop["asked"] = False
        return
    stop = model._agentos_stop = {"asked": False}

    def trigger(_locals, _globals, callback, n_envs):
        model.num_timesteps += n_envs
        callback.update_locals({"infos": [_locals["info"]]})  # evaluate_policy calls once per environment
        if callback.on_step() is False:
            stop["asked"] = True

    update = model._do_one_update

    def do_one_update(callback, async_eval):
        update(callback, async_eval)
        if stop["asked"]:  # ends ARS.learn's loop; train() puts the real count back
            model._agentos_steps, model.num_timesteps = model.num_timesteps, max(model.num_timesteps,
                                                                                 model._total_timesteps)

    model._trigger_callback, model._do_one_update = trigger, do_one_update
