#!/usr/bin/python3
"""k8s_validate: checks every object of rendered manifests (YAML documents on standard input
or in files) against the Kubernetes API schema, as Debian's python3-kubernetes models carry it
(each model's attribute_map and openapi_types): an unknown field, a value of the wrong type or
a required field left out is an error naming the object and the field's path. The Prometheus
Operator's kinds (ServiceMonitor, Probe, PrometheusRule) are checked against the subset of
their CRD schema written below, unknown fields refused the same way.
Exit status: 0 all valid, 1 errors (one line each on standard error), 2 usage."""
import re
import sys

import yaml
from kubernetes import client
from kubernetes.client.configuration import Configuration

CFG = Configuration()
CFG.client_side_validation = True

# ---- Kubernetes' own kinds, from the python3-kubernetes models


def model_class(api_version, kind):
    version = api_version.split("/")[-1]
    return getattr(client, version[0].upper() + version[1:] + kind, None)


def check_type(tname, value, path, errs):
    """Checks value against an openapi_types type name; returns False after an error."""
    if value is None:
        return True
    m = re.fullmatch(r"list\[(.+)\]", tname)
    if m:
        if not isinstance(value, list):
            errs.append(f"{path}: expected a list, got {type(value).__name__}")
            return False
        for i, v in enumerate(value):
            check_type(m.group(1), v, f"{path}[{i}]", errs)
        return True
    m = re.fullmatch(r"dict\(str, (.+)\)", tname)
    if m:
        if not isinstance(value, dict):
            errs.append(f"{path}: expected a map, got {type(value).__name__}")
            return False
        inner = m.group(1)
        for k, v in value.items():
            if inner == "str" and isinstance(v, (int, float)) and not isinstance(v, bool):
                continue  # quantities such as cpu: 1
            check_type(inner, v, f"{path}.{k}", errs)
        return True
    simple = {"str": str, "bool": bool, "float": (int, float), "datetime": str, "date": str}
    if tname in simple:
        if not isinstance(value, simple[tname]) or (tname != "bool" and isinstance(value, bool)):
            errs.append(f"{path}: expected {tname}, got {type(value).__name__} {value!r}")
            return False
        return True
    if tname == "int":
        if not isinstance(value, int) or isinstance(value, bool):
            errs.append(f"{path}: expected an integer, got {value!r}")
            return False
        return True
    if tname == "object":  # IntOrString, Quantity, RawExtension
        return True
    cls = getattr(client, tname, None)
    if cls is None:
        errs.append(f"{path}: the schema has no type {tname}")
        return False
    return check_model(cls, value, path, errs)


def check_model(cls, value, path, errs):
    if not isinstance(value, dict):
        errs.append(f"{path}: expected an object ({cls.__name__}), got {type(value).__name__}")
        return False
    by_json = {j: a for a, j in cls.attribute_map.items()}
    kwargs = {}
    ok = True
    for key, v in value.items():
        attr = by_json.get(key)
        if attr is None:
            errs.append(f"{path}.{key}: unknown field (not in {cls.__name__}; "
                        f"known: {', '.join(sorted(by_json))})")
            ok = False
            continue
        ok &= check_type(cls.openapi_types[attr], v, f"{path}.{key}", errs)
        kwargs[attr] = v
    if ok:
        try:  # the models refuse a required field left out and some enumerations
            cls(local_vars_configuration=CFG, **kwargs)
        except (ValueError, TypeError) as e:
            errs.append(f"{path}: {e}")
            ok = False
    return ok


# ---- the Prometheus Operator's kinds: the fields these manifests may use, nothing else

S, I, B = "str", "int", "bool"
LABELS = {"*": S}
SELECTOR = {"matchLabels": LABELS,
            "matchExpressions": [{"key": S, "operator": S, "values": [S]}]}
RELABEL = {"sourceLabels": [S], "separator": S, "targetLabel": S, "regex": S,
           "modulus": I, "replacement": S, "action": S}
ENDPOINT = {"port": S, "targetPort": "any", "path": S, "scheme": S, "params": {"*": [S]},
            "interval": S, "scrapeTimeout": S, "honorLabels": B, "honorTimestamps": B,
            "relabelings": [RELABEL], "metricRelabelings": [RELABEL]}
RULE = {"record": S, "alert": S, "expr": S, "for": S, "labels": LABELS, "annotations": LABELS}
CRDS = {
    "ServiceMonitor": {
        "jobLabel": S, "targetLabels": [S], "podTargetLabels": [S],
        "endpoints!": [ENDPOINT], "selector!": SELECTOR,
        "namespaceSelector": {"any": B, "matchNames": [S]}, "sampleLimit": I},
    "Probe": {
        "jobName": S, "prober!": {"url!": S, "scheme": S, "path": S, "proxyUrl": S},
        "module": S, "interval": S, "scrapeTimeout": S,
        "targets": {"staticConfig": {"static": [S], "labels": LABELS,
                                     "relabelingConfigs": [RELABEL]},
                    "ingress": {"selector": SELECTOR,
                                "namespaceSelector": {"any": B, "matchNames": [S]},
                                "relabelingConfigs": [RELABEL]}},
        "metricRelabelings": [RELABEL], "sampleLimit": I},
    "PrometheusRule": {
        "groups!": [{"name!": S, "interval": S, "limit": I, "rules!": [RULE]}]},
}


def check_crd(schema, value, path, errs):
    if schema == "any":
        return
    if isinstance(schema, str):
        want = {"str": str, "int": int, "bool": bool}[schema]
        if not isinstance(value, want) or (schema != "bool" and isinstance(value, bool)):
            errs.append(f"{path}: expected {schema}, got {value!r}")
        return
    if isinstance(schema, list):
        if not isinstance(value, list):
            errs.append(f"{path}: expected a list, got {type(value).__name__}")
            return
        for i, v in enumerate(value):
            check_crd(schema[0], v, f"{path}[{i}]", errs)
        return
    if not isinstance(value, dict):
        errs.append(f"{path}: expected an object, got {type(value).__name__}")
        return
    fields = {k.rstrip("!"): v for k, v in schema.items()}
    for k in schema:
        if k.endswith("!") and k[:-1] not in value:
            errs.append(f"{path}.{k[:-1]}: required field missing")
    for k, v in value.items():
        if k in fields:
            check_crd(fields[k], v, f"{path}.{k}", errs)
        elif "*" in fields:
            check_crd(fields["*"], v, f"{path}.{k}", errs)
        else:
            errs.append(f"{path}.{k}: unknown field (known: {', '.join(sorted(fields))})")


def check_object(doc, errs):
    kind, api = doc.get("kind"), doc.get("apiVersion")
    name = (doc.get("metadata") or {}).get("name", "?")
    where = f"{kind}/{name}"
    if not kind or not api:
        errs.append(f"{where}: apiVersion and kind are required")
        return
    if api == "monitoring.coreos.com/v1" and kind in CRDS:
        extra = set(doc) - {"apiVersion", "kind", "metadata", "spec"}
        for k in sorted(extra):
            errs.append(f"{where}.{k}: unknown field")
        check_model(client.V1ObjectMeta, doc.get("metadata") or {}, f"{where}.metadata", errs)
        check_crd(CRDS[kind], doc.get("spec"), f"{where}.spec", errs)
        return
    cls = model_class(api, kind)
    if cls is None:
        errs.append(f"{where}: unknown kind {kind} of {api}")
        return
    check_model(cls, doc, where, errs)
    if not (doc.get("metadata") or {}).get("name"):
        errs.append(f"{where}.metadata.name: required")


def main(argv):
    docs = []
    sources = argv[1:] or ["-"]
    for src in sources:
        text = sys.stdin.read() if src == "-" else open(src, encoding="utf-8").read()
        docs += [d for d in yaml.safe_load_all(text) if d is not None]
    if not docs:
        print("k8s_validate: no objects", file=sys.stderr)
        return 2
    errs = []
    for d in docs:
        check_object(d, errs)
    for e in errs:
        print(f"invalid: {e}", file=sys.stderr)
    print(f"{len(docs)} objects, {len(errs)} errors")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
