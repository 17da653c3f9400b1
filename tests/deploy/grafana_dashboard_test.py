"""deploy/grafana/exactq.json offline: valid dashboard JSON that Grafana can import,
every panel on the Prometheus data source variable with queries, the panels the issue
asks for present, variables defined and used, no panels overlapping. (The live test
evaluates every query against a real Prometheus.)"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dashboard  # noqa: E402
import promql_parts  # noqa: E402


class DashboardTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.board = dashboard.load()
        cls.panels = dashboard.panels(cls.board)

    def test_identity(self):
        self.assertEqual(self.board["uid"], "exactq-overview")
        self.assertTrue(self.board["title"])
        self.assertIsInstance(self.board["schemaVersion"], int)
        self.assertNotIn("id", self.board, "no instance id: the file imports into any Grafana")

    def test_panels_have_queries_on_the_datasource_variable(self):
        ids = [p["id"] for p in self.board["panels"]] + [p["id"] for p in self.panels]
        self.assertEqual(len(set(p["id"] for p in self.board["panels"])), len(self.board["panels"]))
        self.assertEqual(len(set(p["id"] for p in self.panels)), len(self.panels), ids)
        for p in self.panels:
            with self.subTest(panel=p["title"]):
                self.assertIn(p["type"], ("timeseries", "stat", "heatmap", "gauge", "bargauge", "table"))
                self.assertTrue(p.get("description"), "say what the panel shows")
                self.assertEqual(p["datasource"], {"type": "prometheus", "uid": "${datasource}"})
                self.assertTrue(p["targets"])
                refs = [t["refId"] for t in p["targets"]]
                self.assertEqual(len(refs), len(set(refs)))
                for t in p["targets"]:
                    self.assertTrue(t["expr"].strip())
                    self.assertEqual(t.get("datasource", p["datasource"]), p["datasource"])
                self.assertIn("unit", p["fieldConfig"]["defaults"])

    def test_layout_does_not_overlap(self):
        cells = {}
        for p in self.board["panels"]:
            g = p["gridPos"]
            self.assertLessEqual(g["x"] + g["w"], 24, p["title"])
            for x in range(g["x"], g["x"] + g["w"]):
                for y in range(g["y"], g["y"] + g["h"]):
                    self.assertNotIn((x, y), cells, f"{p['title']} overlaps {cells.get((x, y))}")
                    cells[(x, y)] = p["title"]

    def test_variables_defined_and_used(self):
        defined = {v["name"] for v in self.board["templating"]["list"]}
        self.assertEqual(defined, {"datasource", "namespace", "pod"})
        used = set()
        for p in self.panels:
            used |= dashboard.variables_used(p["datasource"]["uid"])
            for t in p["targets"]:
                used |= dashboard.variables_used(t["expr"])
        for v in self.board["templating"]["list"]:
            if v["type"] == "query":
                used |= dashboard.variables_used(v["definition"])
        self.assertEqual(used - dashboard.BUILTINS, defined)
        for _, _, expr in dashboard.queries(self.board):
            if not dashboard.is_dcgm(expr):
                self.assertIn('namespace=~"$namespace", pod=~"$pod"', expr)
            if "rate(" in expr or "increase(" in expr:
                self.assertIn("[$__rate_interval]", expr)

    def test_required_panels(self):
        exprs = " ".join(e for _, _, e in dashboard.queries(self.board))
        read = set()
        for _, _, e in dashboard.queries(self.board):
            read |= {promql_parts.family(n) for n in promql_parts.metric_names(e)}
        for family in ("exactq_frames_scored_total", "exactq_received_bytes_total",
                       "exactq_frame_stage_seconds", "exactq_frame_seconds", "exactq_active_streams",
                       "exactq_queue_depth",
                       "exactq_fallbacks_total", "exactq_errors_total",
                       "exactq_device_memory_used_bytes", "DCGM_FI_DEV_GPU_UTIL"):
            self.assertIn(family, read)
        self.assertIn("sum by (metric, backend) (rate(exactq_frames_scored_total", exprs)
        for q in ("0.5", "0.9", "0.99"):
            self.assertIn(f"histogram_quantile({q}, sum by (stage, le)", exprs)


if __name__ == "__main__":
    unittest.main(verbosity=2)
