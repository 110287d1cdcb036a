#!/usr/bin/env bash
# kubernetes: the manifests of deploy/kubernetes render and are valid Kubernetes objects.
#  1. every overlay renders offline with `kubectl kustomize`, and every object passes
#     tests/tools/k8s_validate.py (the API schema of Debian's python3-kubernetes models; the
#     Prometheus Operator kinds against their CRD fields): an unknown field, a wrong type or a
#     missing required field fails;
#  2. a typo in a field name, a string where an integer goes, a required field left out and a
#     kustomization naming a missing file each fail (the check can fail);
#  3. least privilege: every container runs as non-root, drops ALL capabilities, adds none,
#     forbids privilege escalation, has a read-only root; host network only in host-network;
#  4. every --option the workloads give netrig is one its help lists; the PrometheusRule's
#     groups are deploy/prometheus/netrig.rules.yml's.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
K8S=$ROOT/deploy/kubernetes
VALIDATE=$ROOT/tests/tools/k8s_validate.py
PY=/usr/bin/python3
command -v kubectl >/dev/null 2>&1 || skip "kubectl is not installed (apt-get install kubernetes-client: Debian 12's kubectl 1.20 renders these overlays)"
[[ -x $PY ]] && "$PY" -c 'import kubernetes, yaml' 2>/dev/null ||
    skip "python3-kubernetes is not installed (apt-get install python3-kubernetes)"

# ---- 1. render and validate every overlay
overlays=()
for d in "$K8S"/overlays/*/; do overlays+=("$(basename "$d")"); done
check "three overlays (${overlays[*]})" test "${#overlays[@]}" -eq 3
for o in "${overlays[@]}"; do
    if ! kubectl kustomize "$K8S/overlays/$o" >"$T/$o.yaml" 2>"$T/$o.err"; then
        fail "overlay $o does not render: $(head -c 400 "$T/$o.err")"
        continue
    fi
    "$PY" "$VALIDATE" "$T/$o.yaml" >"$T/$o.out" 2>&1 ||
        fail "overlay $o: objects invalid: $(head -c 800 "$T/$o.out")"
    log "overlay $o: $(tail -n 1 "$T/$o.out")"
done
kinds() { "$PY" -c 'import sys, yaml; print(" ".join(sorted(d["kind"] for d in yaml.safe_load_all(open(sys.argv[1])) if d)))' "$1"; }
k=$(kinds "$T/pod-network.yaml")
check "pod-network has the DaemonSet, Deployment, Services, CronJob ($k)" \
    test "$k" == "ConfigMap CronJob DaemonSet Deployment Namespace Service Service"
k=$(kinds "$T/prometheus-operator.yaml")
check "prometheus-operator adds ServiceMonitors, a Probe and a PrometheusRule ($k)" \
    bash -c "grep -q 'Probe PrometheusRule Service Service ServiceMonitor ServiceMonitor' <<<'$k'"

# ---- 2. the check fails on broken manifests
must_fail() { # DESC FILE PATTERN: the validator refuses FILE naming PATTERN
    local rc=0
    "$PY" "$VALIDATE" "$2" >"$T/bad.out" 2>&1 || rc=$?
    check "$1 is refused naming it (rc $rc: $(grep -m1 invalid "$T/bad.out" | cut -c1-160))" \
        bash -c "[[ $rc -eq 1 ]] && grep -q -- '$3' '$T/bad.out'"
}
sed 's/readOnlyRootFilesystem: true/readOnlyRootFileSystem: true/' "$T/pod-network.yaml" >"$T/typo.yaml"
must_fail "a typo in a field name" "$T/typo.yaml" 'securityContext.readOnlyRootFileSystem: unknown field'
sed 's/^  replicas: 1$/  replicas: "1"/' "$T/pod-network.yaml" >"$T/type.yaml"
must_fail "a string for an integer" "$T/type.yaml" 'spec.replicas: expected an integer'
"$PY" - "$T/pod-network.yaml" >"$T/nosel.yaml" <<'EOF'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
for d in docs:
    if d["kind"] == "Deployment":
        del d["spec"]["selector"]
print(yaml.safe_dump_all(docs))
EOF
must_fail "a Deployment without its selector" "$T/nosel.yaml" 'Deployment/netrig-exporter.spec: .*selector.*must not be .None'
sed 's/interval: 60s/intervall: 60s/' "$T/prometheus-operator.yaml" >"$T/crd.yaml"
must_fail "a typo in a ServiceMonitor" "$T/crd.yaml" 'endpoints\[0\].intervall: unknown field'
cp -r "$K8S" "$T/k8s"
sed -i 's/- mesh-cronjob.yaml/- mesh-cronjob.yml/' "$T/k8s/base/kustomization.yaml"
rc=0
kubectl kustomize "$T/k8s/overlays/pod-network" >/dev/null 2>"$T/kbad.err" || rc=$?
check "a kustomization naming a missing file does not render (rc $rc)" test "$rc" -ne 0

# ---- 3. least privilege
"$PY" - "$T/pod-network.yaml" "$T/host-network.yaml" >"$T/priv.out" 2>&1 <<'EOF' || fail "least privilege: $(cat "$T/priv.out")"
import sys, yaml
bad = []
def pods(doc):
    s = doc.get("spec", {})
    if doc["kind"] == "CronJob":
        return s["jobTemplate"]["spec"]["template"]["spec"]
    return s.get("template", {}).get("spec")
for f in sys.argv[1:]:
    overlay = f.rsplit("/", 1)[-1]
    for d in yaml.safe_load_all(open(f)):
        if not d or not pods(d):
            continue
        p = pods(d)
        w = f"{overlay} {d['kind']}/{d['metadata']['name']}"
        if not p.get("securityContext", {}).get("runAsNonRoot"):
            bad.append(f"{w}: runAsNonRoot is not set")
        if p.get("automountServiceAccountToken") is not False:
            bad.append(f"{w}: mounts a service account token")
        host = p.get("hostNetwork", False)
        if host != (overlay == "host-network.yaml" and d["kind"] == "DaemonSet"):
            bad.append(f"{w}: hostNetwork {host}")
        for c in p["containers"]:
            sc = c.get("securityContext", {})
            caps = sc.get("capabilities", {})
            if caps.get("drop") != ["ALL"] or caps.get("add"):
                bad.append(f"{w} {c['name']}: capabilities {caps}")
            if sc.get("allowPrivilegeEscalation") is not False or not sc.get("readOnlyRootFilesystem"):
                bad.append(f"{w} {c['name']}: privilege escalation or a writable root")
            if sc.get("privileged"):
                bad.append(f"{w} {c['name']}: privileged")
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF

# ---- 4. netrig's options and the rules
"$PY" - "$T/pod-network.yaml" >"$T/opts" <<'EOF'
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if not d or d["kind"] not in ("DaemonSet", "Deployment"):
        continue
    for c in d["spec"]["template"]["spec"]["containers"]:
        args = c.get("args", [])
        for a in args[1:]:
            print(args[0], a.split("=")[0])
EOF
check "the workloads give netrig options ($(wc -l <"$T/opts"))" test "$(wc -l <"$T/opts")" -ge 6
while read -r cmd opt; do
    check "netrig $cmd knows $opt" bash -c "'$NETRIG' help $cmd | grep -q -- '$opt\\b'"
done <"$T/opts"
"$PY" - "$ROOT/deploy/prometheus/netrig.rules.yml" "$K8S/overlays/prometheus-operator/prometheusrule.yaml" <<'EOF' || fail "the PrometheusRule's groups differ from deploy/prometheus/netrig.rules.yml"
import sys, yaml
a = yaml.safe_load(open(sys.argv[1]))["groups"]
b = yaml.safe_load(open(sys.argv[2]))["spec"]["groups"]
sys.exit(0 if a == b else 1)
EOF
finish
