"""The policy's side of the pipe, run inside the sandbox: observations in, actions out, nothing else.

``python -m agentos.sandbox._policy_side`` reads a hello (the environment and policy names and the
environment's settings), builds the policy the way ``agentos evaluate`` does (the environment is
built here only for its spaces), answers whether it decides in batches, then serves requests
until the pipe closes:

* ``{"op": "seed", "seed": S}``: seed and reset the policy (a block of batched episodes starts);
* ``{"op": "batch"}`` + observations: ``decide_batch`` on them, the actions back as one array;
* ``{"op": "step", "starts": {slot: seed}}`` + slots + observations: each slot has a policy of
  its own, built like the first (one episode at a time); a slot that starts an episode is seeded and reset
  first; ``decide`` per observation, the actions back as one array.

The protocol uses the file descriptors the process started with as stdin and stdout; the package's
own prints go to stderr. Everything the verifier needs to trust happens on the other side.
"""

from __future__ import annotations

import os
import sys

from ._wire import recv_array, recv_json, send_array, send_json


def _build(hello: dict):
    from ..config import AgentConfig
    from ..core._context import AgentContext, use

    env, policy = hello["environment"], hello["policy"]
    lines = [f"[environment]\ndefault = {env}\n", f"[policy]\ndefault = {policy}\n"]
    settings = hello.get("settings") or {}
    if settings:
        lines.append(f"[environment.{env}]\n" + "".join(f"{k} = {v}\n" for k, v in settings.items()))
    context = use(AgentContext(AgentConfig.from_text("\n".join(lines), path="/tmp/agent.ini")))
    return context, context.get("policy")


def _batched(policy) -> bool:
    from ..core._policy import Policy

    if getattr(policy, "learns_while_running", False):
        return False
    return getattr(type(policy), "decide_batch", Policy.decide_batch) is not Policy.decide_batch


def serve(inp, out) -> None:
    import numpy as np

    hello = recv_json(inp)
    context, policy = _build(hello)
    slots: dict[int, object] = {}
    send_json(out, {"ready": True, "batched": _batched(policy)})
    while True:
        try:
            request = recv_json(inp)
        except Exception:  # the verifier closed the pipe: done
            break
        op = request.get("op")
        if op == "seed":
            policy.seed(int(request["seed"]))
            policy.reset()
        elif op == "batch":
            send_array(out, np.asarray(policy.decide_batch(recv_array(inp))))
        elif op == "step":
            which = recv_array(inp).tolist()
            observations = recv_array(inp)
            for slot, seed in request.get("starts", {}).items():
                player = slots.get(int(slot))
                if player is None:  # a policy of its own per slot (a copy could share state, e.g. a closure's RNG)
                    player = slots[int(slot)] = context.create("policy", hello["policy"])
                player.seed(int(seed))
                player.reset()
            send_array(out, np.asarray([slots[s].decide(o.item() if o.ndim == 0 else o)
                                        for s, o in zip(which, observations, strict=True)]))
        else:
            break
    context.close()


def main() -> None:
    inp = os.fdopen(os.dup(0), "rb", buffering=0)
    out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)  # the package's prints never reach the pipe
    sys.stdin = open(os.devnull)  # noqa: SIM115
    sys.stdout = sys.stderr
    serve(inp, out)


if __name__ == "__main__":
    main()
