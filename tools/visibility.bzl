"""Who may depend on what: the layer rules, enforced by Bazel's visibility.

The engine (format, io, exact, metrics, pooling, runtime) never sees the server, the
API or the clients; engine/exact never sees the metrics; the metrics never see the
runtime. A dependency that breaks a rule fails the build. Each package lists one of
these as its default_visibility.
"""

# The wire contract: the server, the clients and their tests.
PROTO_USERS = [
    "//client:__subpackages__",
    "//proto:__subpackages__",
    "//server:__subpackages__",
    "//tests:__subpackages__",
]

# The server: its tests, and the clients' tests that start a real exactqd.
SERVER_USERS = [
    "//client/python:__subpackages__",
    "//server:__subpackages__",
    "//tests:__subpackages__",
]

CLIENT_USERS = [
    "//client:__subpackages__",
    "//tests:__subpackages__",
]

# The runtime places frames on backends; only the server, the self-check's golden set
# (and benchmarks and tests) drive it. Metrics and engine/exact cannot see it.
RUNTIME_USERS = [
    "//bench:__subpackages__",
    "//engine/golden:__subpackages__",
    "//engine/runtime:__subpackages__",
    "//server:__subpackages__",
    "//tests:__subpackages__",
]

# Host and device helpers: the whole engine, its benchmarks and tests.
PLATFORM_USERS = [
    "//bench:__subpackages__",
    "//engine:__subpackages__",
    "//tests:__subpackages__",
]

# The metrics: the runtime, the server (capabilities) and the client (--help) use them,
# never engine/exact.
METRICS_USERS = [
    "//bench:__subpackages__",
    "//client:__subpackages__",
    "//engine/golden:__subpackages__",
    "//engine/ladder:__subpackages__",
    "//engine/metrics:__subpackages__",
    "//engine/runtime:__subpackages__",
    "//server:__subpackages__",
    "//tests:__subpackages__",
    "//tools:__subpackages__",
]
