"""Leaderboards: one per environment and task, built from the results records the catalogue keeps.

Written with the other pages (publish, yank, rebuild, verify), from ``catalogue.json`` alone: no
package is opened, imported or run to rank it. Files::

    leaderboards/index.html, index.json              every board, its entry count and leader
    leaderboards/<environment>.html, <environment>.json
    leaderboards/<environment>--<task>.html, .json   e.g. gymnasium--cartpole-v1 (see _ranking.board_id)

An entry is a policy project's newest non-yanked release whose record is of that board's
environment and task (yanked releases drop out; their record files stay served, as their wheels
do), and names a release of that environment the index serves (:mod:`._ranking`, which also holds
the statuses and the ranking). Every environment component in the catalogue has a leaderboard,
even an empty one, so its page can link to it.
"""

from __future__ import annotations

import json
import os
import re
from urllib.parse import quote

from ..host._names import normalize
from ._html import component_path, escape
from ._html import page as _page
from ._ranking import RANKING, board_id, environment_problem, flagged_earlier, rank_key, served_environments

FOLDER = "leaderboards"
_SAFE_STEM = re.compile(r"[a-z0-9][a-z0-9_-]{0,200}")
FORMAT = "agentos-leaderboard/1"


def _entry(project: str, info: dict, version: str, results: dict) -> dict:
    policy = results["policy"]
    return {
        "project": project,
        "package": info.get("package", project),
        "component": policy["name"],
        "version": version,
        "environment": results["environment"],
        **{key: results[key] for key in ("episodes", "seeds", "mean", "std", "iqm", "interval", "confidence")},
        "claimed_interval": results.get("claimed_interval"),  # the record's own; ranked by the index's
        "metrics": results.get("metrics", {}),
        "created": results.get("created", ""),
        "status": results.get("status", "claimed"),
        "flagged_earlier": flagged_earlier(info.get("releases", {}), version),
        "verification": results.get("verification"),
        "record": results["record"],
        "replay": results.get("replay"),
        "page": component_path("policy", policy["name"]),
    }


def boards(catalogue: dict) -> dict[str, list[dict]]:
    """Board id (:func:`~._ranking.board_id`) -> its ranked entries (each entry carries its ``rank``)."""
    from packaging.version import Version

    out: dict[str, list[dict]] = {
        normalize(c["name"]): [] for c in catalogue.get("components", []) if c["kind"] == "environment"
    }
    served = served_environments(catalogue)
    for project, info in catalogue["projects"].items():
        newest: dict[str, tuple] = {}
        for version, release in info.get("releases", {}).items():
            results = release.get("results")
            if not results or release.get("yanked") or environment_problem(results["environment"], served):
                continue
            board = board_id(results["environment"])
            if board not in newest or Version(version) > Version(newest[board][0]):
                newest[board] = (version, results)
        for board, (version, results) in newest.items():
            out.setdefault(board, []).append(_entry(project, info, version, results))
    for entries in out.values():
        entries.sort(key=rank_key)
        for rank, entry in enumerate(entries, 1):
            entry["rank"] = rank
    return dict(sorted(out.items()))


def stem(board: str) -> str:
    """The file name (without suffix) of a leaderboard: its board id (an environment's normalized name,
    or ``<environment>--<task>``), except that an environment named ``index`` gets ``index_``
    (normalized names never hold ``_``), beside index.html."""
    board = board if "--" in board else normalize(board)
    return "index_" if board == "index" else board


def board_path(board: str) -> str:
    """The leaderboard page of ``board`` relative to the index root (``.html``; ``.json`` beside it)."""
    return f"{FOLDER}/{quote(stem(board), safe='')}.html"


def title(board: str, entries: list[dict]) -> str:
    """``gymnasium CartPole-v1`` for a task's board (the task as its leading entry spells it), else the id."""
    if "--" not in board or not entries:
        return board
    env = entries[0]["environment"]
    return f"{env['name']} {env.get('task', '')}".strip()


def _played(environment: dict) -> str:
    task = environment.get("task")
    return f"{environment['version']}, task {task}" if task else environment["version"]


def _href(path: str) -> str:
    return escape("../" + quote(path, safe="/"))


def _number(value) -> str:
    return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"


def _seeds(seeds: dict) -> str:
    if seeds["consecutive"]:
        return f"{seeds['first']}..{seeds['last']}"
    return f"{seeds['first']}..{seeds['last']} (not consecutive)"


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def status_text(entry: dict) -> str:
    """``verified``, ``verified (unsandboxed)``, ``claimed; flagged earlier (1.0.0)``, ... (one line)."""
    status, check = entry["status"], entry.get("verification") or {}
    text = "verified (unsandboxed)" if status == "verified" and check.get("sandboxed") is False else status
    if entry.get("flagged_earlier"):
        text += f"; flagged earlier ({entry['flagged_earlier']})"
    return text


def _status(entry: dict) -> str:
    check = entry.get("verification") or {}
    notes = []
    if _is_number(check.get("iqm")) and check.get("episodes"):
        interval = check.get("interval")
        low, high = interval if isinstance(interval, list) and len(interval) == 2 else [check["iqm"]] * 2
        notes.append(f"re-run: IQM {_number(check['iqm'])} [{_number(low)}, {_number(high)}], "
                     f"{check['episodes']} episodes")
    env = check.get("environment")
    if isinstance(env, dict) and env.get("name"):
        task = f" ({env['task']})" if env.get("task") else ""
        notes.append(f"on {env['name']} {env.get('version', '')}{task}")
    if entry["status"] in ("unverifiable", "flagged", "pending") and isinstance(check.get("reason"), str):
        notes.append(check["reason"][:300])
    css = "flagged" if entry.get("flagged_earlier") else entry["status"]
    if entry["status"] == "verified" and check.get("sandboxed") is False:
        css = "unsandboxed"
    small = "".join(f"<br><small>{escape(note)}</small>" for note in notes)
    return f'<span class="{escape(css)}">{escape(status_text(entry))}</span>{small}'


def _metrics(metrics: dict) -> str:
    """The environment's own episode metrics (averaged), one per line."""
    return "<br>".join(f"{escape(name)} {_number(value)}" for name, value in sorted(metrics.items())) or "none"


def _row(entry: dict) -> str:
    interval = entry["interval"]
    shown = f"[{_number(interval[0])}, {_number(interval[1])}]" if interval else "too few episodes"
    replay = (
        f'<a href="{_href(entry["replay"])}"><img class="replay" src="{_href(entry["replay"])}" '
        f'alt="replay of {escape(entry["component"])}" width="96" loading="lazy"></a>'
        if entry["replay"]
        else "none"
    )
    return (
        f'<tr data-project="{escape(entry["project"])}"><td>{entry["rank"]}</td>'
        f'<td><a href="{_href(entry["page"])}">{escape(entry["component"])}</a><br>'
        f"<small>{escape(entry['package'])} {escape(entry['version'])}</small></td>"
        f'<td class="interval">{escape(shown)}</td><td>{_number(entry["iqm"])}</td>'
        f"<td>{_number(entry['mean'])} &plusmn; {_number(entry['std'])}</td>"
        f"<td>{escape(entry['episodes'])}</td><td>{escape(_seeds(entry['seeds']))}</td>"
        f"<td>{escape(_played(entry['environment']))}</td><td>{_metrics(entry['metrics'])}</td>"
        f"<td>{_status(entry)}</td><td>{replay}</td>"
        f'<td><a href="{_href(entry["record"])}">results.json</a></td></tr>'
    )


def board_html(board: str, entries: list[dict]) -> str:
    head = (
        "<tr><th>Rank</th><th>Policy</th><th>95% interval (IQM)</th><th>IQM</th><th>Mean &plusmn; std</th>"
        "<th>Episodes</th><th>Seeds</th><th>Environment version</th><th>Metrics</th><th>Status</th><th>Replay</th>"
        "<th>Record</th></tr>"
    )
    body = [
        f"<p>Trained policies on <b>{escape(title(board, entries))}</b>, ranked: {escape(RANKING)}. "
        "<i>claimed</i>: the publisher's own record; <i>pending</i>: queued for the index's re-run; "
        "<i>verified</i>: re-run by the index (<code>agentos index verify</code>) on new seeds, and it agreed "
        "(<i>unsandboxed</i>: re-run outside the sandbox, as a maintainer chose); <i>flagged</i>: the re-run "
        "disagreed; <i>unverifiable</i>: the re-run could not play it. "
        f'Machine-readable: <a href="{escape(quote(stem(board), safe=""))}.json">'
        f"{escape(stem(board))}.json</a>; all leaderboards: "
        '<a href="index.html">leaderboards</a>.</p>',
        f'<table id="leaderboard"><thead>{head}</thead><tbody>',
        *[_row(e) for e in entries],
        "</tbody></table>",
    ]
    if not entries:
        body.append('<p id="empty">No results yet: publish a trained policy (agentos publish --run).</p>')
    return _page(f"Leaderboard: {title(board, entries)}", body, 1)


def _task(board: str, entries: list[dict]) -> str | None:
    return entries[0]["environment"].get("task") if "--" in board and entries else None


def board_json(board: str, entries: list[dict]) -> str:
    environment = entries[0]["environment"]["name"] if "--" in board and entries else board
    page = {"format": FORMAT, "board": stem(board), "environment": environment, "task": _task(board, entries),
            "ranking": RANKING, "entries": entries}
    return json.dumps(page, indent=1, sort_keys=False) + "\n"


def index_html(all_boards: dict[str, list[dict]]) -> str:
    rows = []
    for env, entries in all_boards.items():
        leader = entries[0] if entries else None
        lead = f"{escape(leader['component'])} {escape(leader['version'])}" if leader else "none yet"
        link = f'<a href="{escape(quote(stem(env), safe=""))}.html">{escape(title(env, entries))}</a>'
        rows.append(f"<tr><td>{link}</td><td>{len(entries)}</td><td>{lead}</td></tr>")
    body = [
        f"<p>One leaderboard per environment, and per task of an environment that plays many (a Gymnasium id), "
        f"ranked: {escape(RANKING)}. "
        'Machine-readable: <a href="index.json">index.json</a>.</p>',
        '<table id="leaderboards"><thead><tr><th>Environment (task)</th><th>Entries</th><th>Leader</th></tr></thead>'
        "<tbody>",
        *rows,
        "</tbody></table>",
    ]
    return _page("Leaderboards", body, 1)


def index_json(all_boards: dict[str, list[dict]]) -> str:
    rows = [
        {"environment": e[0]["environment"]["name"] if "--" in env and e else env, **_task_key(env, e),
         "entries": len(e), "leader": e[0]["project"] if e else None, "page": f"{stem(env)}.html"}
        for env, e in all_boards.items()
    ]
    head = json.dumps({"format": FORMAT, "ranking": RANKING})[:-1]  # one row a line, by json's C encoder
    return head + ', "leaderboards": [\n' + ",\n".join(json.dumps(row) for row in rows) + "\n]}\n"


def _task_key(board: str, entries: list[dict]) -> dict:
    task = _task(board, entries)
    return {"task": task} if task else {}


def _affected(catalogue: dict, changed, all_boards: dict) -> set[str]:
    """Boards a change of the projects ``changed`` can alter (an environment's release: all its task boards)."""
    envs, boards_of = set(), set()
    for project in changed:
        for release in catalogue["projects"].get(project, {}).get("releases", {}).values():
            if release.get("results"):
                boards_of.add(board_id(release["results"]["environment"]))
            envs |= {normalize(c["name"]) for c in release.get("components", []) if c["kind"] == "environment"}
    return boards_of | envs | {b for b in all_boards if b.split("--", 1)[0] in envs}


def pages(root: str, catalogue: dict, changed=None) -> list[tuple[str, str | None]]:
    """``(path, text)`` of the leaderboard files to write, and ``(path, None)`` for stale ones (to remove).

    With ``changed`` (the projects a publish, yank or verify touched), only the leaderboards of the
    environments they concern are rendered again (and any that is missing), plus the list of them."""
    all_boards = boards(catalogue)
    folder = os.path.join(root, FOLDER)
    present = set(os.listdir(folder)) if os.path.isdir(folder) else set()
    redo = None if changed is None else _affected(catalogue, changed, all_boards)
    out: list[tuple[str, str | None]] = []
    wanted = {"index.json", "index.html"}
    for env, entries in all_boards.items():
        name = stem(env)
        if not _SAFE_STEM.fullmatch(name):
            continue  # a name no publish accepts (a hand-edited catalogue): no file is named after it
        wanted.update((f"{name}.json", f"{name}.html"))
        if redo is None or env in redo or f"{name}.json" not in present or f"{name}.html" not in present:
            out.append((os.path.join(folder, f"{name}.json"), board_json(env, entries)))
            out.append((os.path.join(folder, f"{name}.html"), board_html(env, entries)))
    out.append((os.path.join(folder, "index.json"), index_json(all_boards)))
    out.append((os.path.join(folder, "index.html"), index_html(all_boards)))
    for name in sorted(present - wanted):
        if name.endswith((".html", ".json")):
            out.append((os.path.join(folder, name), None))
    return out


def component_section(all_boards: dict[str, list[dict]], row: dict) -> list[str]:
    """Lines for a component page: an environment's leaderboard link, a policy's own entries (no rank:
    the page is rewritten when its own project changes, the ranking whenever any project does)."""
    if row["kind"] == "environment":
        env = normalize(row["name"])
        link = f'<a id="leaderboard" href="../../{escape(board_path(env))}">leaderboard</a>'
        every = f'<a href="../../{FOLDER}/index.html">all leaderboards</a>'
        return [f"<p>Trained policies on this environment, ranked: its {link} (and one per task it plays, "
                f"e.g. a Gymnasium id: {every}).</p>"]
    mine = [(env, e) for env, entries in all_boards.items() for e in entries if e["project"] == row["project"]]
    if row["kind"] != "policy" or not mine:
        return []
    out = [
        "<h2>Results</h2>",
        '<table id="results"><thead><tr><th>Environment</th><th>Version</th>'
        "<th>IQM</th><th>95% interval</th><th>Episodes</th><th>Status</th><th>Replay</th></tr></thead><tbody>",
    ]
    for env, e in mine:
        interval = (
            f"[{_number(e['interval'][0])}, {_number(e['interval'][1])}]" if e["interval"] else "too few episodes"
        )
        replay = (
            f'<img class="replay" src="../{_href(e["replay"])}" alt="replay" width="160">' if e["replay"] else "none"
        )
        out.append(
            f'<tr><td><a href="../../{escape(board_path(env))}">{escape(title(env, [e]))}</a> '
            f"</td><td>{escape(e['version'])}</td>"
            f"<td>{_number(e['iqm'])}</td><td>{escape(interval)}</td><td>{e['episodes']}</td>"
            f"<td>{escape(status_text(e))}</td><td>{replay}</td></tr>"
        )
    return out + ["</tbody></table>"]
