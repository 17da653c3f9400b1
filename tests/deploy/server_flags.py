"""exactqd's flags and their defaults, read from the real binary's --helpfull, so that
deployment files are checked against the server as built, not against a copy."""

import re
import subprocess

_FLAG = re.compile(r"--(\w+) \(.*?\);\s+default: (.*?);\n", re.DOTALL)


def server_flags(exactqd):
    """{flag_name: default as a string} for the flags defined in server/ sources."""
    # absl's help exits 1 by design; the text is what matters.
    text = subprocess.run([exactqd, "--helpfull"], capture_output=True, text=True,
                          timeout=30).stdout
    flags = {}
    for section in re.split(r"\n\s*Flags from ", text):
        if not section.startswith("server/"):
            continue
        for name, default in _FLAG.findall(section):
            flags[name] = default[1:-1] if default.startswith('"') else default
    if "listen" not in flags:
        raise AssertionError(f"no server flags in {exactqd} --helpfull:\n{text}")
    return flags


def normalise(name):
    """--metrics-listen and --metrics_listen are one flag."""
    return name.lstrip("-").replace("-", "_")


def effective_config(defaults, args, env):
    """The values a server started with these args and environment would use: a flag on
    the command line wins over EXACTQ_<FLAG>, which wins over the default. Raises on
    an argument or variable that names no flag."""
    config = dict(defaults)
    from_env = {}
    for item in env or []:
        name = item["name"]
        if not name.startswith("EXACTQ_"):
            continue
        flag = name[len("EXACTQ_"):].lower()
        if flag not in defaults:
            raise AssertionError(f"environment variable {name} names no exactqd flag")
        from_env[flag] = str(item.get("value", ""))
    config.update(from_env)
    for arg in args or []:
        if not arg.startswith("--"):
            raise AssertionError(f"argument {arg!r} is not a --flag=value")
        name, eq, value = arg.partition("=")
        flag = normalise(name)
        if flag not in defaults:
            raise AssertionError(f"argument {arg!r} names no exactqd flag")
        if not eq:
            raise AssertionError(f"argument {arg!r}: write --flag=value")
        config[flag] = value
    return config


def port_of(address):
    """'0.0.0.0:50051' -> 50051."""
    return int(address.rsplit(":", 1)[1])
