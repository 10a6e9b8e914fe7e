"""Preset ppo_zoo: stable-baselines3 PPO with rl-baselines3-zoo's CartPole-v1 hyperparameters.

Plain data: reading it imports nothing heavy (see agentos.experiments).
"""

PRESET = {'summary': 'sb3 PPO, rl-baselines3-zoo CartPole-v1 hyperparameters (bench_cartpole_sb3.py)',
 'components': {'policy': ['sb3', {'device': 'cpu'}],
                'trainer': ['sb3',
                            {'algorithm': 'PPO',
                             'n_envs': 8,
                             'n_steps': 32,
                             'batch_size': 256,
                             'gae_lambda': 0.8,
                             'gamma': 0.98,
                             'n_epochs': 20,
                             'ent_coef': 0.0,
                             'learning_rate': 'lin_0.001',
                             'clip_range': 'lin_0.2'}]},
 'environments': {'gymnasium': {'environment': {'id': 'CartPole-v1'}}}}
