"""Leaderboards: one per environment, built from the results records the catalogue keeps.

Written with the other pages (publish, yank, rebuild, verify), from ``catalogue.json`` alone: no
package is opened, imported or run to rank it. Files::

    leaderboards/index.html, index.json              every environment, its entry count and leader
    leaderboards/<environment>.html, <environment>.json

An entry is a policy project's newest non-yanked release whose record is of that environment
(yanked releases drop out; their record files stay served, as their wheels do). Ranking (highest
first): the lower end of the record's 95% interval of the IQM, then its IQM; entries without an
interval (too few episodes) come after all entries with one, by IQM; entries flagged by
``agentos index verify`` come last. Every environment component in the catalogue has a
leaderboard, even an empty one, so its page can link to it.
"""

from __future__ import annotations

import json
import os
import re
from urllib.parse import quote

from ..host._names import normalize
from ._html import component_path, escape
from ._html import page as _page

FOLDER = "leaderboards"
_SAFE_STEM = re.compile(r"[a-z0-9][a-z0-9_-]{0,150}")
FORMAT = "agentos-leaderboard/1"
RANKING = (
    "highest lower end of the IQM's confidence interval first (ties: higher IQM); entries without an "
    "interval (too few episodes) after every entry with one, by IQM; entries flagged by 'agentos index verify' last"
)


def _rank_key(entry: dict):
    flagged = entry["status"] == "flagged"
    interval = entry["interval"]
    group = 2 if flagged else (0 if interval is not None else 1)
    low = interval[0] if interval is not None else entry["iqm"]
    return (group, -low, -entry["iqm"], entry["project"], entry["version"])


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
        "verification": results.get("verification"),
        "record": results["record"],
        "replay": results.get("replay"),
        "page": component_path("policy", policy["name"]),
    }


def boards(catalogue: dict) -> dict[str, list[dict]]:
    """Normalized environment name -> its ranked entries (each entry carries its ``rank``)."""
    from packaging.version import Version

    out: dict[str, list[dict]] = {
        normalize(c["name"]): [] for c in catalogue.get("components", []) if c["kind"] == "environment"
    }
    for project, info in catalogue["projects"].items():
        newest: dict[str, tuple] = {}
        for version, release in info.get("releases", {}).items():
            results = release.get("results")
            if not results or release.get("yanked"):
                continue
            env = normalize(results["environment"]["name"])
            if env not in newest or Version(version) > Version(newest[env][0]):
                newest[env] = (version, results)
        for env, (version, results) in newest.items():
            out.setdefault(env, []).append(_entry(project, info, version, results))
    for entries in out.values():
        entries.sort(key=_rank_key)
        for rank, entry in enumerate(entries, 1):
            entry["rank"] = rank
    return dict(sorted(out.items()))


def stem(environment: str) -> str:
    """The file name (without suffix) of an environment's leaderboard: its normalized name, except that
    an environment named ``index`` gets ``index_`` (normalized names never hold ``_``), beside index.html."""
    env = normalize(environment)
    return "index_" if env == "index" else env


def board_path(environment: str) -> str:
    """The leaderboard page of ``environment`` relative to the index root (``.html``; ``.json`` beside it)."""
    return f"{FOLDER}/{quote(stem(environment), safe='')}.html"


def _href(path: str) -> str:
    return escape("../" + quote(path, safe="/"))


def _number(value) -> str:
    return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"


def _seeds(seeds: dict) -> str:
    if seeds["consecutive"]:
        return f"{seeds['first']}..{seeds['last']}"
    return f"{seeds['first']}..{seeds['last']} (not consecutive)"


def _status(entry: dict) -> str:
    status, check = entry["status"], entry.get("verification") or {}
    if status == "claimed":
        return '<span class="claimed">claimed</span>'
    if "iqm" not in check:  # pending, or unverifiable: nothing was played; the reason is what to show
        why = escape(check.get("reason", ""))
        return f'<span class="{escape(status)}">{escape(status)}</span><br><small>{why}</small>'
    low, high = check.get("interval") or [check.get("iqm"), check.get("iqm")]
    seen = f"re-run: IQM {_number(check['iqm'])} [{_number(low)}, {_number(high)}], {check['episodes']} episodes"
    return f'<span class="{escape(status)}">{escape(status)}</span><br><small>{escape(seen)}</small>'


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
        f"<td>{escape(entry['environment']['version'])}</td><td>{_metrics(entry['metrics'])}</td>"
        f"<td>{_status(entry)}</td><td>{replay}</td>"
        f'<td><a href="{_href(entry["record"])}">results.json</a></td></tr>'
    )


def board_html(environment: str, entries: list[dict]) -> str:
    head = (
        "<tr><th>Rank</th><th>Policy</th><th>95% interval (IQM)</th><th>IQM</th><th>Mean &plusmn; std</th>"
        "<th>Episodes</th><th>Seeds</th><th>Environment version</th><th>Metrics</th><th>Status</th><th>Replay</th>"
        "<th>Record</th></tr>"
    )
    body = [
        f"<p>Trained policies on <b>{escape(environment)}</b>, ranked by the {escape(RANKING)}. "
        "<i>claimed</i>: the publisher's own record; <i>verified</i>: re-run by the index's maintainers "
        "(<code>agentos index verify</code>) on new seeds, and it agreed; <i>flagged</i>: the re-run disagreed. "
        f'Machine-readable: <a href="{escape(quote(stem(environment), safe=""))}.json">'
        f"{escape(stem(environment))}.json</a>; all leaderboards: "
        '<a href="index.html">leaderboards</a>.</p>',
        f'<table id="leaderboard"><thead>{head}</thead><tbody>',
        *[_row(e) for e in entries],
        "</tbody></table>",
    ]
    if not entries:
        body.append('<p id="empty">No results yet: publish a trained policy (agentos publish --run).</p>')
    return _page(f"Leaderboard: {environment}", body, 1)


def board_json(environment: str, entries: list[dict]) -> str:
    page = {"format": FORMAT, "environment": environment, "ranking": RANKING, "entries": entries}
    return json.dumps(page, indent=1, sort_keys=False) + "\n"


def index_html(all_boards: dict[str, list[dict]]) -> str:
    rows = []
    for env, entries in all_boards.items():
        leader = entries[0] if entries else None
        lead = f"{escape(leader['component'])} {escape(leader['version'])}" if leader else "none yet"
        link = f'<a href="{escape(quote(stem(env), safe=""))}.html">{escape(env)}</a>'
        rows.append(f"<tr><td>{link}</td><td>{len(entries)}</td><td>{lead}</td></tr>")
    body = [
        f"<p>One leaderboard per environment, ranked by the {escape(RANKING)}. "
        'Machine-readable: <a href="index.json">index.json</a>.</p>',
        '<table id="leaderboards"><thead><tr><th>Environment</th><th>Entries</th><th>Leader</th></tr></thead><tbody>',
        *rows,
        "</tbody></table>",
    ]
    return _page("Leaderboards", body, 1)


def index_json(all_boards: dict[str, list[dict]]) -> str:
    rows = [
        {"environment": env, "entries": len(e), "leader": e[0]["project"] if e else None, "page": f"{stem(env)}.html"}
        for env, e in all_boards.items()
    ]
    head = json.dumps({"format": FORMAT, "ranking": RANKING})[:-1]  # one row a line, by json's C encoder
    return head + ', "leaderboards": [\n' + ",\n".join(json.dumps(row) for row in rows) + "\n]}\n"


def _affected(catalogue: dict, changed) -> set[str]:
    """Environments whose leaderboard a change of the projects ``changed`` can alter."""
    envs = set()
    for project in changed:
        for release in catalogue["projects"].get(project, {}).get("releases", {}).values():
            if release.get("results"):
                envs.add(normalize(release["results"]["environment"]["name"]))
            envs |= {normalize(c["name"]) for c in release.get("components", []) if c["kind"] == "environment"}
    return envs


def pages(root: str, catalogue: dict, changed=None) -> list[tuple[str, str | None]]:
    """``(path, text)`` of the leaderboard files to write, and ``(path, None)`` for stale ones (to remove).

    With ``changed`` (the projects a publish, yank or verify touched), only the leaderboards of the
    environments they concern are rendered again (and any that is missing), plus the list of them."""
    all_boards = boards(catalogue)
    folder = os.path.join(root, FOLDER)
    present = set(os.listdir(folder)) if os.path.isdir(folder) else set()
    redo = None if changed is None else _affected(catalogue, changed)
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
        link = f'<a id="leaderboard" href="../../{escape(board_path(row["name"]))}">leaderboard</a>'
        return [f"<p>Trained policies on this environment, ranked: its {link}.</p>"]
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
            f'<tr><td><a href="../../{escape(board_path(env))}">{escape(e["environment"]["name"])}</a> '
            f"</td><td>{escape(e['version'])}</td>"
            f"<td>{_number(e['iqm'])}</td><td>{escape(interval)}</td><td>{e['episodes']}</td>"
            f"<td>{escape(e['status'])}</td><td>{replay}</td></tr>"
        )
    return out + ["</tbody></table>"]
