"""deploy/grafana/exactq.json: its panels and their queries, with Grafana's variables
substituted the way Grafana would before sending a query to Prometheus."""

import json
import re

DASHBOARD = "deploy/grafana/exactq.json"
BUILTINS = {"__rate_interval", "__interval", "__range"}


def load():
    with open(DASHBOARD, encoding="utf-8") as f:
        return json.load(f)


def panels(board):
    """Every panel, rows' collapsed children included; rows themselves left out."""
    out = []
    for p in board["panels"]:
        if p["type"] == "row":
            out.extend(p.get("panels", []))
        else:
            out.append(p)
    return out


def queries(board):
    """(panel title, refId, expr) for every Prometheus query of every panel."""
    return [(p["title"], t["refId"], t["expr"]) for p in panels(board) for t in p.get("targets", [])]


def variables_used(text):
    return set(re.findall(r"\$\{?(\w+)", text))


def substitute(expr, values):
    """Replace $name and ${name} by values[name]; every variable must have a value."""
    def one(m):
        name = m.group(1) or m.group(2)
        if name not in values:
            raise KeyError(f"no value for ${name} in {expr}")
        return values[name]
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", one, expr)


def is_dcgm(expr):
    return "DCGM_" in expr
