"""``python -m agentos_preset_zoo [WORD]``: the zoo presets (name, task family, rl-zoo's n_timesteps), those
whose name contains WORD; ``--skipped``: the pairs left out and why."""

from __future__ import annotations

import sys

from . import SKIPPED, SOURCE, presets


def main(argv: list[str]) -> int:
    if argv[:1] == ["--skipped"]:
        for row in SKIPPED:
            print(f"{row['algorithm']:<9} {row['task']:<36} {row['reason']}")
        return 0
    word = argv[0].lower() if argv else ""
    print(f"{'PRESET':<40} {'FAMILY':<16} {'N_TIMESTEPS':>12}   (rl_zoo3 {SOURCE['version']})")
    for name, preset in sorted(presets().items()):
        if word in name:
            print(f"{name:<40} {preset['zoo']['family']:<16} {preset['zoo']['n_timesteps']:>12,}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
