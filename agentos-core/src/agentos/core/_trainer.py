"""The Trainer abstraction: improves a policy from experience in an environment."""

from __future__ import annotations


class Trainer:
    """Learning algorithms live in trainers; ``train`` changes ``policy`` in place.

    ``callback(episode_return, length)`` is called at the end of every episode so that the host can
    report progress and record the run; a trainer stops early when it returns False. A trainer that
    has the episode's final ``info`` passes it too when the callback accepts it (the host's does),
    ``callback(episode_return, length, info=info)``: the environment's declared episode metrics
    (``metadata["episode_metrics"]``) are read from it. :meth:`episode_reporter` wraps a callback so that
    a trainer can always call ``report(episode_return, length, info)``.

    ``deterministic = True`` (a class attribute) states that the same seed, budget, settings and
    package versions give the very same learning curve; ``agentos reproduce`` then requires an
    identical curve instead of one within its tolerance.
    """

    deterministic: bool = False

    @staticmethod
    def episode_reporter(callback):
        """``callback`` as ``report(episode_return, length, info=None)``, for a trainer to call at the
        end of every episode whatever the callback accepts: ``info`` is passed only to a callback that
        takes ``info=`` (or ``**kwargs``). Returns what the callback returns (False: stop); with no
        callback, a reporter that does nothing."""
        if callback is None:
            return _no_report
        if _takes_info(callback):
            return lambda episode_return, length, info=None: callback(episode_return, length, info=info)
        return lambda episode_return, length, info=None: callback(episode_return, length)

    def train(self, policy, environment, *, episodes=None, steps=None, seed=None, callback=None):
        """Train for ``episodes`` episodes or ``steps`` steps (whichever is given)."""
        raise NotImplementedError(f"{type(self).__name__}.train()")

    def sync_policy(self, policy) -> None:
        """Bring ``policy`` up to date in the middle of :meth:`train` (called from the episode callback
        before the policy is evaluated or saved, e.g. by ``[train]`` evaluation): a trainer that keeps
        part of the policy's state elsewhere while it trains (observation statistics...) hands it over
        here. The default does nothing."""

    def save(self, path: str) -> None:
        """Write the trainer's own state (optimiser moments, step counts...) to ``path``, so that
        ``agentos train --from-run`` continues where it stopped; no pickles of live objects."""
        raise NotImplementedError(f"{type(self).__name__} keeps no state between runs")

    def load(self, path: str) -> None:
        """Read state written by :meth:`save`."""
        raise NotImplementedError(f"{type(self).__name__} keeps no state between runs")


def _no_report(episode_return, length, info=None) -> None:
    return None


def _takes_info(callback) -> bool:
    """Whether ``callback`` accepts ``info=`` (the host's does: it reads episode metrics from it)."""
    import inspect

    try:
        parameters = inspect.signature(callback).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.kind is p.VAR_KEYWORD or p.name == "info" for p in parameters)
