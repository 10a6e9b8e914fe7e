"""Population-based training: the exploit step copies a better peer's weights through handles."""

from __future__ import annotations

import asyncio

from agentos_academy import launch, population_based_training


def test_exploit_copies_weights_and_settings_of_a_better_peer(agent_factory, tmp_path):
    dirs = [agent_factory(f"p{i}", alpha=a, epsilon=e) for i, (a, e) in enumerate([(0.5, 0.1), (0.01, 0.9),
                                                                                          (0.3, 0.2), (0.05, 0.6)])]

    async def scenario():
        async with launch(dirs, exchange="local") as handles:
            events = await population_based_training(handles, rounds=2, episodes_per_round=10, seed=1)
            by_label = {h.label: h for h in handles}
            last = [e for e in events if e["round"] == 1]
            pairs = []
            for event in last:
                winner, loser = by_label[event["from"]], by_label[event["to"]]
                pairs.append(([await winner.decide(s) for s in range(8)], [await loser.decide(s) for s in range(8)],
                              (await loser.stats())["settings"], event["settings"]))
            independent = await population_based_training(handles, rounds=1, episodes_per_round=5, fraction=0)
            return events, pairs, independent

    events, pairs, independent = asyncio.run(scenario())
    assert independent == []  # fraction=0: the baseline trains with no exploit step
    assert [e["round"] for e in events] == [0, 1]  # one of four exploits per round
    for winner_actions, loser_actions, loser_settings, copied in pairs:
        assert loser_actions == winner_actions
        assert all(abs(loser_settings[k] - v) < 1e-12 for k, v in copied.items())
