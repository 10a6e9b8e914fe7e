"""Numbers that agree (issue 19, point 11): the progress bar's steps/s is the summary's; a long run's
curve is a smooth band without an axis offset."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

from learning._helpers import GAME_2048_SARSA, make_agent

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
RATE = re.compile(r"([0-9][0-9,]*\.[0-9]{2}) steps/s")


def _in_a_terminal(cmd, cwd, timeout=120) -> tuple[int, str]:
    import pty
    import select

    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "200", "TERM": "xterm"}
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=follower, stdout=follower, stderr=follower)
    os.close(follower)
    output, deadline = b"", time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                output += chunk
            elif proc.poll() is not None:
                break
        return proc.wait(timeout=10), ANSI.sub("", output.decode(errors="replace"))
    finally:
        os.close(leader)
        if proc.poll() is None:
            proc.kill()


def test_the_bar_ends_on_the_summarys_steps_per_second(tmp_path):
    agent = make_agent(tmp_path, GAME_2048_SARSA)
    code, text = _in_a_terminal([sys.executable, "-m", "agentos", "train", "400", "--seed", "0"], agent)
    assert code == 0, text
    summary_line = next(line for line in text.splitlines() if line.startswith("finished: "))
    bar = text[: text.index("finished: ")]
    assert "train" in bar and "mean100" in bar, bar[-500:]  # the rich bar was drawn
    bar_rates, summary_rate = RATE.findall(bar), RATE.findall(summary_line)
    assert bar_rates and len(summary_rate) == 1
    assert bar_rates[-1] == summary_rate[0], (bar_rates[-3:], summary_line)


def test_a_long_runs_curve_is_a_smooth_band_without_an_axis_offset(tmp_path):
    import numpy as np
    from agentos.trackers import plot_returns, returns_figure
    from matplotlib.collections import PolyCollection

    rng = np.random.default_rng(0)
    n = 30_000
    returns = np.maximum(0, rng.normal(np.linspace(5_000, 100_000, n), 20_000))
    frames = np.cumsum((returns / 30).astype(int) + 60)  # about 3e8 steps: matplotlib would write "1e8"
    tiles = np.where(returns > 40_000, 2048, 1024)
    with open(tmp_path / "returns.csv", "w") as f:
        f.write("episode,frame,return,length,seconds,best_tile,reached_2048\n")
        for i in range(n):
            f.write(f"{i + 1},{frames[i]},{float(returns[i])!r},1,0.0,{tiles[i]},{int(tiles[i] >= 2048)}\n")
    fig = returns_figure(str(tmp_path), title="2048", rates=["reached_2048"])
    fig.canvas.draw()
    axes = fig.get_axes()
    assert len(axes) == 2  # returns, and the rate in percent
    for ax in axes:
        assert ax.xaxis.get_offset_text().get_text() == "" and ax.yaxis.get_offset_text().get_text() == ""
        for line in ax.get_lines():
            assert len(line.get_xdata()) <= 300  # a mean per window, not one point per episode
    labels = [t.get_text() for t in axes[0].get_xticklabels() if t.get_text()]
    assert any(label.endswith("M") for label in labels), labels
    band = [c for c in axes[0].collections if isinstance(c, PolyCollection)]
    assert len(band) == 1
    mean = axes[0].get_lines()[0].get_ydata()
    assert np.abs(np.diff(mean)).max() < 3_000  # smooth: windows of 300 games, not single games
    assert axes[1].get_ylim() == (0.0, 100.0)
    rate = axes[1].get_lines()[0].get_ydata()
    assert rate[0] < 10 and rate[-1] > 90
    out = plot_returns(str(tmp_path), title="2048", rates=["reached_2048"])
    assert os.path.getsize(out) > 10_000
