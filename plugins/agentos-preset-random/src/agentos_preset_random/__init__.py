"""Preset random: Uniform random play: the baseline (no trainer).

Plain data: reading it imports nothing heavy (see agentos.experiments).
"""

PRESET = {'summary': 'uniform random actions; a baseline that only tests', 'components': {'policy': ['random', {}]}}
