"""Preset sarsa_table: Tabular SARSA on a q_table, with the settings of the README's corridor and 2048 figures.

Plain data: reading it imports nothing heavy (see agentos.experiments).
"""

PRESET = {'summary': 'q_table + sarsa (corridor: bench_corridor_sarsa.py; 2048: bench_2048_learning.py)',
 'components': {'policy': ['q_table', {'key': 'auto'}],
                'trainer': ['sarsa', {'alpha': 0.5, 'gamma': 0.99, 'epsilon': 0.1}]},
 'environments': {'2048': {'policy': {'key': '2048'},
                           'trainer': {'alpha': 0.05,
                                       'gamma': 0.95,
                                       'epsilon': 0.2,
                                       'epsilon_decay': 0.999,
                                       'epsilon_min': 0.01}}}}
