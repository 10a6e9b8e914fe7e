"""Preset dqn_2048: DQN (board conv net + dqn_sgd) with the settings of the README's 2048 figure.

Plain data: reading it imports nothing heavy (see agentos.experiments).
"""

PRESET = {'summary': 'dqn + dqn_sgd (2048: bench_2048_learning.py; an MLP with a short schedule elsewhere)',
 'components': {'policy': ['dqn', {'network': 'auto', 'channels': 64, 'hidden': [256], 'device': 'cpu'}],
                'trainer': ['dqn_sgd',
                            {'learning_rate': 0.0005,
                             'gamma': 0.99,
                             'buffer_size': 50000,
                             'batch_size': 64,
                             'learning_starts': 5000,
                             'train_freq': 8,
                             'target_update': 2000,
                             'epsilon_start': 1.0,
                             'epsilon_end': 0.02,
                             'epsilon_steps': 60000,
                             'max_grad_norm': 10.0,
                             'reward_scale': 0.01,
                             'threads': 1}]},
 'environments': {'2048': {'policy': {'network': 'board'}},
                  'corridor': {'policy': {'hidden': [64]},
                               'trainer': {'learning_starts': 200,
                                           'train_freq': 1,
                                           'target_update': 200,
                                           'epsilon_steps': 2000,
                                           'reward_scale': 1.0}}}}
