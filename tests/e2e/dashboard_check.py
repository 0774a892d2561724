#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks the Grafana dashboard and the Prometheus alert rules against what
an exporter really served (test_dashboards.sh). One line per problem on
stdout, exit 1 if any.

  dashboard_check.py names SCRAPE DASHBOARD RULES TESTS
      every sluice_ name in the three files is one SCRAPE serves; every
      series of TESTS has a label set SCRAPE serves that name with; every
      family SCRAPE serves is on the dashboard
  dashboard_check.py dashboard DASHBOARD
      valid JSON, the datasource an import input, every panel a query
  dashboard_check.py coverage RULES TESTS
      every alert has a firing and a not-firing promtool test
"""
import json
import re
import sys

import yaml

NAME = re.compile(r"\bsluice_[A-Za-z0-9_:]*")
SERIES = re.compile(r"^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})?$")
LABEL = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?')
DS_UID = "${DS_PROMETHEUS}"
# Added by Prometheus, not the exporter.
TARGET_LABELS = {"instance", "job"}
# Named by the operator: any value will do.
FREE_LABELS = {"interface", "rule"}

problems = []


def labels_of(text):
    out, pos = {}, 0
    text = text or ""
    while pos < len(text):
        m = LABEL.match(text, pos)
        if not m:
            raise ValueError(f"cannot parse labels {text!r}")
        out[m.group(1)] = m.group(2)
        pos = m.end()
    return out


def served(path):
    """name -> list of label dicts, from an exposition."""
    series = {}
    for line in open(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = SERIES.match(line.rsplit(" ", 1)[0])
        if m:
            series.setdefault(m.group(1), []).append(labels_of(m.group(2)))
    return series


def check_names(scrape, files):
    have = served(scrape)
    for path in files:
        for n in sorted(set(NAME.findall(open(path).read()))):
            if n not in have:
                problems.append(f"{path}: {n} is not served by the exporter")
    return have


def check_all_shown(scrape, dashboard):
    families = {l.split()[2] for l in open(scrape) if l.startswith("# TYPE sluice_")}
    shown = set(NAME.findall(open(dashboard).read()))
    for f in sorted(families - shown):
        problems.append(f"{dashboard}: no panel shows {f}, which the exporter serves")


def check_test_series(have, tests):
    for t in yaml.safe_load(open(tests))["tests"]:
        for s in t.get("input_series", []):
            m = SERIES.match(s["series"])
            name, labels = m.group(1), labels_of(m.group(2))
            if not name.startswith("sluice_") or name not in have:
                continue
            keys = set(labels) - TARGET_LABELS
            same_keys = [l for l in have[name] if set(l) == keys]
            if not same_keys:
                problems.append(f"{tests}: {s['series']}: the exporter serves {name} with labels "
                                f"{sorted({tuple(sorted(l)) for l in have[name]})}")
                continue
            for k in keys - FREE_LABELS:
                if labels[k] not in {l[k] for l in same_keys}:
                    problems.append(f"{tests}: {s['series']}: {k}=\"{labels[k]}\" is not served")


def uid_ok(ds):
    return isinstance(ds, dict) and ds.get("uid") == DS_UID


def check_dashboard(path):
    try:
        d = json.load(open(path))
    except ValueError as e:
        problems.append(f"{path}: not JSON: {e}")
        return
    if not any(i.get("name") == "DS_PROMETHEUS" and i.get("type") == "datasource" and
               i.get("pluginId") == "prometheus" for i in d.get("__inputs", [])):
        problems.append(f"{path}: no DS_PROMETHEUS datasource input")
    panels = [p for p in d.get("panels", []) if p.get("type") != "row"]
    if not panels:
        problems.append(f"{path}: no panels")
    for p in panels:
        title = p.get("title", "?")
        targets = p.get("targets", [])
        if not uid_ok(p.get("datasource")):
            problems.append(f"{path}: panel {title!r}: datasource is not {DS_UID}")
        if not targets or not all(t.get("expr", "").strip() for t in targets):
            problems.append(f"{path}: panel {title!r}: a panel without a query")
        for t in targets:
            if not uid_ok(t.get("datasource")):
                problems.append(f"{path}: panel {title!r} {t.get('refId')}: datasource is not {DS_UID}")
    names = {v.get("name"): v for v in d.get("templating", {}).get("list", [])}
    for v in ("instance", "interface"):
        if v not in names or not uid_ok(names[v].get("datasource")):
            problems.append(f"{path}: no ${v} variable over {DS_UID}")
    if len({p.get("id") for p in d.get("panels", [])}) != len(d.get("panels", [])):
        problems.append(f"{path}: panel ids repeat")


def check_coverage(rules, tests):
    alerts = [r["alert"] for g in yaml.safe_load(open(rules))["groups"]
              for r in g["rules"] if "alert" in r]
    cases = [c for t in yaml.safe_load(open(tests))["tests"] for c in t.get("alert_rule_test", [])]
    for a in alerts:
        mine = [c for c in cases if c.get("alertname") == a]
        if not any(c.get("exp_alerts") for c in mine):
            problems.append(f"{tests}: no case where {a} fires")
        if not any(not c.get("exp_alerts") for c in mine):
            problems.append(f"{tests}: no case where {a} does not fire")
    if not alerts:
        problems.append(f"{rules}: no alert")
    print(f"alerts: {len(alerts)}, cases: {len(cases)}")


def main(argv):
    if len(argv) == 6 and argv[1] == "names":
        have = check_names(argv[2], argv[3:6])
        check_test_series(have, argv[5])
        check_all_shown(argv[2], argv[3])
    elif len(argv) == 3 and argv[1] == "dashboard":
        check_dashboard(argv[2])
    elif len(argv) == 4 and argv[1] == "coverage":
        check_coverage(argv[2], argv[3])
    else:
        print(__doc__.strip())
        return 2
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
