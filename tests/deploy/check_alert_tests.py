"""Every alert in the rule files has a promtool unit test in which it fires and one in
which it stays silent (tests/deploy/promtool/exactq-alerts.test.yml)."""

import glob
import sys

import yaml

RULES = "deploy/prometheus/rules/*.yml"
TESTS = "tests/deploy/promtool/exactq-alerts.test.yml"


def main():
    alerts = set()
    for path in sorted(glob.glob(RULES)):
        with open(path, encoding="utf-8") as f:
            for group in yaml.safe_load(f)["groups"]:
                alerts.update(r["alert"] for r in group["rules"] if "alert" in r)
    with open(TESTS, encoding="utf-8") as f:
        tests = yaml.safe_load(f)
    fires, silent = set(), set()
    for test in tests["tests"]:
        for case in test.get("alert_rule_test", []):
            (fires if case.get("exp_alerts") else silent).add(case["alertname"])
    missing = sorted((alerts - fires) | (alerts - silent))
    unknown = sorted((fires | silent) - alerts)
    for name in missing:
        print(f"FAIL: alert {name} lacks a firing or a silent promtool test case")
    for name in unknown:
        print(f"FAIL: promtool tests name {name}, which no rule file defines")
    print(f"{len(alerts)} alerts, each tested firing and silent" if not missing else "")
    return 1 if missing or unknown or not alerts else 0


if __name__ == "__main__":
    sys.exit(main())
