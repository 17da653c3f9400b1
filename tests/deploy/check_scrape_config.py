"""Writes deploy/prometheus/prometheus.yml, with a static target in place of Kubernetes
discovery (which Debian's promtool lacks), into DIR/prometheus.yml, beside a copy of its
rule files, for `promtool check config`."""

import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scrape_config  # noqa: E402


def main(out_dir):
    config = scrape_config.load()
    checked = scrape_config.with_static_targets(config, "exactqd", [("127.0.0.1:9464", {})])
    scrape_config.dump(checked, os.path.join(out_dir, "prometheus.yml"))
    source_dir = os.path.dirname(scrape_config.SCRAPE_CONFIG)
    for rule_file in config.get("rule_files", []):
        os.makedirs(os.path.join(out_dir, os.path.dirname(rule_file)), exist_ok=True)
        shutil.copy(os.path.join(source_dir, rule_file), os.path.join(out_dir, rule_file))


if __name__ == "__main__":
    main(sys.argv[1])
