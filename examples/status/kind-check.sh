#!/usr/bin/env bash
# A manual check of `fleet status` against a real API server (kind), for people who have
# Docker and kind. CI does not run it; tests/test_status.py covers the same reads against a
# local HTTP server. Nothing here touches a cloud: only objects and their status, as the
# controllers would write them, on a throw-away cluster.
#
#   examples/status/kind-check.sh ENV CLUSTER     (from the repository root, after `make synth`)
#   examples/status/kind-check.sh test k8s-sso-test-v25
#
# What it does:
#  1. creates the kind cluster `fleet-status` (kept if it exists; KEEP=1 keeps it afterwards);
#  2. installs the pinned CRDs of the kinds `fleet status` reads (from constructs/fleet/data);
#  3. applies dist/ENV/platform's ClusterRole fleet-status-reader, a service account bound to
#     it, and a kubeconfig for that account: the read-only access the guide documents;
#  4. applies CLUSTER's objects from dist/ENV/clusters/CLUSTER with ArgoCD's tracking
#     annotation, and the Applications of dist/ENV/bootstrap;
#  5. writes a converged status on them (kubectl --subresource=status) and runs
#     `fleet status --env ENV --cluster CLUSTER` through the read-only kubeconfig: expect
#     `converged` for a Magnum cluster whose live version matches (other rows: `progressing`);
#  6. writes upjet's refusal on the ClusterV1 (if there is one) and runs it again: expect
#     `failed` with the whole "refuse to update the external resource ..." message.
set -euo pipefail

ENV_NAME=${1:?usage: $0 ENV CLUSTER}
CLUSTER=${2:?usage: $0 ENV CLUSTER}
KIND_NAME=fleet-status
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DIST="$ROOT/dist/$ENV_NAME"
FLEET=${FLEET:-"$ROOT/.venv/bin/fleet"}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"; [ "${KEEP:-0}" = 1 ] || kind delete cluster --name "$KIND_NAME"' EXIT

for tool in kind kubectl python3; do
  command -v "$tool" >/dev/null || { echo "error: $tool is not installed" >&2; exit 2; }
done
[ -d "$DIST/clusters/$CLUSTER" ] || { echo "error: no $DIST/clusters/$CLUSTER (run make synth)" >&2; exit 2; }

kind get clusters | grep -qx "$KIND_NAME" || kind create cluster --name "$KIND_NAME"
CTX="kind-$KIND_NAME"

# 2. The CRDs, as pinned (gzipped in the package).
for crd in argo-cd/application-crd provider-argocd/cluster.argocd.crossplane.io_clusters \
    provider-openstack/containerinfra.openstack.crossplane.io_clusterv1s \
    provider-openstack/containerinfra.openstack.crossplane.io_nodegroupv1s \
    cluster-api/cluster.x-k8s.io_clusters cluster-api/cluster.x-k8s.io_machinepools \
    cluster-api-provider-oci/infrastructure.cluster.x-k8s.io_ocimanagedclusters \
    cluster-api-provider-oci/infrastructure.cluster.x-k8s.io_ocimanagedcontrolplanes \
    cluster-api-provider-oci/infrastructure.cluster.x-k8s.io_ocimanagedmachinepools; do
  gunzip -c "$ROOT/constructs/fleet/data/crds/$crd.yaml.gz" | kubectl --context "$CTX" apply --server-side -f - >/dev/null
done
kubectl --context "$CTX" wait --for=condition=Established crd --all --timeout=60s >/dev/null
for ns in argocd oke-clusters crossplane-clusters; do
  kubectl --context "$CTX" create namespace "$ns" --dry-run=client -o yaml | kubectl --context "$CTX" apply -f - >/dev/null
done

# 3. The read-only role, bound to a service account, and a kubeconfig for it.
kubectl --context "$CTX" apply -f "$DIST/platform/clusterrole_rbac.authorization.k8s.io_fleet-status-reader.yaml"
kubectl --context "$CTX" -n default create serviceaccount fleet-status --dry-run=client -o yaml | kubectl --context "$CTX" apply -f -
kubectl --context "$CTX" create clusterrolebinding fleet-status --clusterrole=fleet-status-reader \
  --serviceaccount=default:fleet-status --dry-run=client -o yaml | kubectl --context "$CTX" apply -f -
TOKEN=$(kubectl --context "$CTX" -n default create token fleet-status --duration=1h)
kubectl config view --raw --minify --context "$CTX" > "$WORK/kubeconfig"
KUBECONFIG="$WORK/kubeconfig" kubectl config set-credentials reader --token="$TOKEN" >/dev/null
KUBECONFIG="$WORK/kubeconfig" kubectl config set-context reader --cluster="$CTX" --user=reader >/dev/null
KUBECONFIG="$WORK/kubeconfig" kubectl config use-context reader >/dev/null

# 4 and 5. The objects, tracked by their Application, then a converged status on each.
HEAD=$(git -C "$ROOT" log -1 --format=%H -- "dist/$ENV_NAME")
python3 - "$DIST" "$CLUSTER" "$HEAD" "$WORK" <<'PY'
import json, pathlib, sys, yaml
dist, cluster, head, work = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3], pathlib.Path(sys.argv[4])
T = "2026-07-01T09:00:00Z"
apps = {}
for f in (dist / "bootstrap").glob("application_*.yaml"):
    app = yaml.safe_load(f.read_text())
    apps[app["spec"]["source"].get("path", "")] = app
root = next(a for p, a in apps.items() if p.endswith("/bootstrap"))
objects, statuses = [], []
def cond(t, s="True", reason="", message=""):
    c = {"type": t, "status": s, "lastTransitionTime": T, "reason": reason or {"Ready": "Available", "Synced": "ReconcileSuccess"}.get(t, "Success")}
    if message: c["message"] = message
    return c
def status_of(o):
    k = o["kind"]
    if k == "Application":
        return {"sync": {"status": "Synced", "revision": head}, "health": {"status": "Healthy"}}
    if k in ("ClusterV1", "NodegroupV1") or (k == "Cluster" and "argocd" in o["apiVersion"]):
        s = {"conditions": [cond("Ready"), cond("Synced")]}
        if k == "ClusterV1":
            tag = o["spec"]["forProvider"].get("labels", {}).get("kube_tag", "v0.0.0")
            s["atProvider"] = {"apiAddress": "https://192.0.2.10:6443", "coeVersion": tag}
        return s
    if k == "OCIManagedControlPlane":
        return {"ready": True, "version": o["spec"].get("version", ""), "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": T}]}
    if k in ("OCIManagedCluster", "OCIManagedMachinePool"):
        return {"ready": True, "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": T}]}
    if k in ("Cluster", "MachinePool"):
        return {"v1beta2": {"conditions": [{"type": "Available", "status": "True", "reason": "Available", "message": "", "lastTransitionTime": T}]}}
    return None
app = apps[f"{dist.parent.name}/{dist.name}/clusters/{cluster}"]
for o in [app, root]:
    o["metadata"].setdefault("annotations", {})["argocd.argoproj.io/tracking-id"] = f"{root['metadata']['name']}:argoproj.io/Application:argocd/{o['metadata']['name']}"
    objects.append(o)
for f in sorted((dist / "clusters" / cluster).glob("*.yaml")):
    o = yaml.safe_load(f.read_text())
    group = o["apiVersion"].split("/")[0]
    ns = o["metadata"].get("namespace", "")
    o["metadata"].setdefault("annotations", {})["argocd.argoproj.io/tracking-id"] = f"{app['metadata']['name']}:{group}/{o['kind']}:{ns}/{o['metadata']['name']}"
    objects.append(o)
for o in objects:
    s = status_of(o)
    if s is not None:
        statuses.append({"apiVersion": o["apiVersion"], "kind": o["kind"], "metadata": {k: v for k, v in o["metadata"].items() if k in ("name", "namespace")}, "status": s})
(work / "objects.yaml").write_text(yaml.safe_dump_all(objects))
(work / "status.json").write_text(json.dumps(statuses))
PY
kubectl --context "$CTX" apply --server-side -f "$WORK/objects.yaml"
python3 - "$WORK" "$CTX" <<'PY'
import json, pathlib, subprocess, sys
work, ctx = pathlib.Path(sys.argv[1]), sys.argv[2]
for s in json.loads((work / "status.json").read_text()):
    ns = ["-n", s["metadata"]["namespace"]] if s["metadata"].get("namespace") else []
    kind = s["kind"].lower() + "." + s["apiVersion"].split("/")[0]
    subprocess.run(["kubectl", "--context", ctx, *ns, "patch", kind, s["metadata"]["name"],
                    "--subresource=status", "--type=merge", "-p", json.dumps({"status": s["status"]})], check=True)
PY
echo "--- converged (expect: converged for a Magnum cluster; OKE rows may read progressing)"
"$FLEET" --root "$ROOT" status --env "$ENV_NAME" --cluster "$CLUSTER" --kubeconfig "$WORK/kubeconfig" --context reader --format table || true

# 6. upjet's refusal on the ClusterV1, when the cluster has one.
if kubectl --context "$CTX" get clusterv1.containerinfra.openstack.crossplane.io "$CLUSTER" >/dev/null 2>&1; then
  MESSAGE='update failed: async update failed: refuse to update the external resource because the following update requires replacing it: cannot change the value of the argument "labels.kube_tag" from "v1.24.3-cern.0" to "v1.25.3-cern.0"'
  kubectl --context "$CTX" patch clusterv1.containerinfra.openstack.crossplane.io "$CLUSTER" --subresource=status --type=merge \
    -p "$(python3 -c 'import json,sys; print(json.dumps({"status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2026-07-01T09:00:00Z"}, {"type": "Synced", "status": "False", "reason": "ReconcileError", "message": sys.argv[1], "lastTransitionTime": "2026-07-01T10:30:00Z"}]}}))' "$MESSAGE")"
  echo "--- refused (expect: failed, with the whole message under the row)"
  "$FLEET" --root "$ROOT" status --env "$ENV_NAME" --cluster "$CLUSTER" --kubeconfig "$WORK/kubeconfig" --context reader --format table || true
fi
