"""The shipped dashboard and alert rules: promtool accepts and unit-tests the
rules, and every metric a rule or a panel names is in a real `/metrics`
scrape of `transcriber serve` (a renamed metric breaks this test, not a
dashboard nobody looks at until the night it is needed).

promtool comes from Debian's `prometheus` package (`.ci/dev test` installs
it); without it the promtool tests skip, except under CI where they fail.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
import yaml

from tests.helpers.processes import free_port, start_server, wait_ready

DEPLOY = Path(__file__).resolve().parents[3] / "deploy"
RULES = DEPLOY / "prometheus" / "alerts.yml"
RULE_TESTS = DEPLOY / "prometheus" / "alerts_test.yml"
SCRAPE_CONFIG = DEPLOY / "prometheus" / "prometheus.yml"
DASHBOARD = DEPLOY / "grafana" / "dashboards" / "transcriber.json"
# Series Prometheus makes itself for every scrape.
PROMETHEUS_OWN = frozenset({"up"})
_METRIC_RE = re.compile(r"\b(transcriber_[a-zA-Z0-9_]+|up)\b")
_TYPE_RE = re.compile(r"^# TYPE (\S+) (\S+)$")
# prometheus_client declares a labelled counter without children by its full
# name (`# TYPE x_total counter`), one with samples without the suffix.
_SUFFIXES = {"counter": ("", "_total", "_created"), "histogram": ("_bucket", "_sum", "_count",
                                                              "_created"),
             "gauge": ("",), "summary": ("", "_sum", "_count", "_created")}
EXPECTED_ALERTS = {
    "TranscriberScrapeFailing", "TranscriberWriterMailboxDeep", "TranscriberRecordHalted",
    "TranscriberRecordsNearStageLimit", "TranscriberRepliesUndelivered",
    "TranscriberLeaseTakeoversRising", "TranscriberProviderErrorsRising",
    "TranscriberFreeDiskLow", "TranscriberWebhookDeliveriesFailing",
}


def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        reason = "promtool is missing (apt-get install prometheus)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return found


def _promtool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([promtool(), *args], capture_output=True, text=True, timeout=60,
                          check=False, cwd=RULES.parent)


def rule_expressions() -> Iterator[tuple[str, str]]:
    for group in yaml.safe_load(RULES.read_text())["groups"]:
        for rule in group["rules"]:
            yield rule["alert"], rule["expr"]


def panel_expressions() -> Iterator[tuple[str, str]]:
    for panel in orjson.loads(DASHBOARD.read_bytes())["panels"]:
        for target in panel["targets"]:
            yield panel["title"], target["expr"]


def scraped_names(text: str) -> set[str]:
    """Every series name a scrape can carry: its samples, and the suffixed names
    of each declared family (a labelled family without children yet has none)."""
    names = set()
    for line in text.splitlines():
        declared = _TYPE_RE.match(line)
        if declared:
            family, kind = declared.groups()
            names |= {family + suffix for suffix in _SUFFIXES.get(kind, ("",))}
        elif line and not line.startswith("#"):
            names.add(re.split(r"[{ ]", line, maxsplit=1)[0])
    return names


def test_rules_pass_promtool_check() -> None:
    done = _promtool("check", "rules", RULES.name)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(EXPECTED_ALERTS)} rules found" in done.stdout


def test_rules_pass_their_promtool_unit_tests() -> None:
    done = _promtool("test", "rules", RULE_TESTS.name)
    assert done.returncode == 0, done.stdout + done.stderr
    tested = set(re.findall(r"alertname: (\w+)", RULE_TESTS.read_text()))
    assert tested == EXPECTED_ALERTS


def test_promtool_catches_a_broken_rule(tmp_path: Path) -> None:
    broken = RULES.read_text().replace("transcriber_writer_mailbox_depth > 100",
                                       "transcriber_writer_mailbox_depth >")
    (tmp_path / "alerts.yml").write_text(broken)
    done = subprocess.run([promtool(), "check", "rules", "alerts.yml"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode != 0


def test_the_scrape_config_passes_promtool() -> None:
    done = _promtool("check", "config", SCRAPE_CONFIG.name)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_rules_hold_the_alerts_the_issue_lists() -> None:
    assert {name for name, _ in rule_expressions()} == EXPECTED_ALERTS


def test_every_rule_and_panel_names_a_metric() -> None:
    for name, expr in [*rule_expressions(), *panel_expressions()]:
        assert _METRIC_RE.search(expr), name
    dashboard = orjson.loads(DASHBOARD.read_bytes())
    assert dashboard["uid"] == "transcriber"
    assert len(dashboard["panels"]) >= 15


def _scrape(port: int) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    assert b" 200 " in head.split(b"\r\n", 1)[0]
    return body.decode()


def test_every_metric_a_rule_or_panel_names_is_in_a_real_scrape(data_dir: Path) -> None:
    port = free_port()
    server = start_server(data_dir, port)
    try:
        wait_ready(port, server)
        names = scraped_names(_scrape(port))
    finally:
        server.terminate()
        server.communicate(timeout=30)
    assert "transcriber_storage_free_bytes" in names  # the scrape is the service's
    used = {(where, metric)
            for where, expr in [*rule_expressions(), *panel_expressions()]
            for metric in _METRIC_RE.findall(expr)}
    missing = sorted((where, metric) for where, metric in used
                     if metric not in names and metric not in PROMETHEUS_OWN)
    assert missing == []


def test_the_name_check_sees_a_renamed_metric() -> None:
    scrape = ("# TYPE transcriber_claim_seconds histogram\n"
              "transcriber_claim_seconds_bucket{le=\"1\"} 0\n"
              "# TYPE transcriber_records gauge\n")
    names = scraped_names(scrape)
    assert {"transcriber_claim_seconds_bucket", "transcriber_claim_seconds_count",
            "transcriber_records"} <= names
    assert "transcriber_claim_latency_seconds_bucket" not in names
