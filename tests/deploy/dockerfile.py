"""A Dockerfile as a list of stages, each a list of (INSTRUCTION, arguments), with
continuation lines joined and comments dropped: enough to check what the recipe does
where no container engine runs."""

import json


def global_args(path):
    """The ARGs before the first FROM, as {name: default} (None without a default)."""
    args = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            words = line.split()
            if not words or words[0].startswith("#"):
                continue
            if words[0].upper() == "FROM":
                break
            if words[0].upper() == "ARG":
                name, eq, default = words[1].partition("=")
                args[name] = default if eq else None
    return args


def parse(path):
    stages = []
    logical = ""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    joined = []
    for line in lines:
        stripped = line.strip()
        if not logical and (not stripped or stripped.startswith("#")):
            continue
        if stripped.startswith("#"):
            continue  # a comment inside a continued instruction
        if stripped.endswith("\\"):
            logical += stripped[:-1] + " "
            continue
        joined.append(logical + stripped)
        logical = ""
    for instruction in joined:
        keyword, _, arguments = instruction.partition(" ")
        keyword = keyword.upper()
        arguments = " ".join(arguments.split())
        if keyword == "FROM":
            words = arguments.split()
            name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else None
            stages.append({"image": words[0], "name": name, "instructions": []})
        elif not stages:
            if keyword != "ARG":
                raise AssertionError(f"{path}: {keyword} before the first FROM")
        else:
            stages[-1]["instructions"].append((keyword, arguments))
    return stages


def exec_form(arguments):
    """The JSON (exec) form of ENTRYPOINT/CMD, or None for the shell form."""
    try:
        value = json.loads(arguments)
    except ValueError:
        return None
    return value if isinstance(value, list) else None


def all_of(stage, keyword):
    return [a for k, a in stage["instructions"] if k == keyword]
