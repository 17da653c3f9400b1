#!/usr/bin/env bash
# deploy/prometheus with Debian's promtool: the scrape config (Kubernetes discovery
# swapped for a static target, which Debian's build lacks; relabelling and rule files
# checked as written), `promtool check rules`, and the alerts' unit tests.
set -euo pipefail
work=${TEST_TMPDIR:-$(mktemp -d)}

/usr/bin/python3 -B tests/deploy/check_scrape_config.py "$work"
promtool check config "$work/prometheus.yml"
promtool check rules deploy/prometheus/rules/*.yml
# Unit tests name their rule files relative to themselves.
(cd tests/deploy/promtool && promtool test rules exactq-alerts.test.yml)
/usr/bin/python3 -B tests/deploy/check_alert_tests.py
echo PASS
