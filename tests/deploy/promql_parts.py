"""Just enough PromQL structure for the tests: the signals an alert compares with its
threshold, and the metric names an expression reads."""

import re

_COMPARISON = re.compile(r"(==|!=|>=|<=|>|<)(\s*bool\b)?")
_SET_OPERATOR = re.compile(r"\b(and|or|unless)\b")
_NUMBER = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$")
_METRIC = re.compile(r"\b(exactq_[a-zA-Z0-9_]+|DCGM_[A-Z0-9_]+|up)\b(?=\s*[{\[)])")


def top_level(expr):
    """expr with everything inside (), {}, [] and quotes blanked (same length)."""
    out, depth, quote = [], 0, None
    for c in expr:
        if quote:
            out.append(" ")
            if c == quote:
                quote = None
            continue
        if c in "\"'`":
            quote = c
            out.append(" ")
        elif c in "([{":
            depth += 1
            out.append(c if depth == 1 else " ")
        elif c in ")]}":
            depth -= 1
            out.append(c if depth == 0 else " ")
        else:
            out.append(c if depth == 0 else " ")
    return "".join(out)


def signals(expr):
    """The parts of an alert expression that must return series for the alert to be
    able to fire: both sides of its top-level comparison (a number excepted), or the
    argument of a top-level absent(...); otherwise the expression itself."""
    expr = expr.strip()
    outer = top_level(expr)
    if _SET_OPERATOR.search(outer):
        raise ValueError(f"and/or/unless at the top level is not supported: {expr}")
    matches = list(_COMPARISON.finditer(outer))
    if len(matches) > 1:
        raise ValueError(f"more than one top-level comparison: {expr}")
    if matches:
        m = matches[0]
        sides = [expr[:m.start()].strip(), expr[m.end():].strip()]
        return [s for s in sides if not _NUMBER.match(s)]
    m = re.fullmatch(r"absent\s*\((.*)\)", expr, re.DOTALL)
    if m:
        return [m.group(1).strip()]
    return [expr]


def metric_names(expr):
    """Metric names read by expr (ExactQ's, DCGM's and up), histogram suffixes kept."""
    unquoted = re.sub(r'"[^"]*"', '""', expr)
    # Label lists: by (...), without (...), on (...), ignoring (...), group_left (...).
    unlisted = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", unquoted)
    return set(_METRIC.findall(unlisted))


def family(name):
    """exactq_x_seconds_bucket -> exactq_x_seconds (the family in # TYPE lines)."""
    return re.sub(r"_(bucket|sum|count)$", "", name)
