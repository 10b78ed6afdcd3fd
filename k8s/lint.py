"""The project's own rules for rendered manifests, beyond the API schemas.

Run by k8s/validate on each kustomize build: `python lint.py NAME FILE`.
Prints one line per problem and exits 1 if there is any. The rules:

- every pod runs as non-root with the RuntimeDefault seccomp profile and
  no service-account token; every container has a read-only root, no
  privilege escalation, all capabilities dropped, CPU and memory requests
  and a memory limit;
- long-running containers have liveness and readiness probes, on ports
  they declare;
- every ConfigMap and Secret a pod refers to is in the build (except
  EXTERNAL_SECRETS, which an operator creates), with the keys asked for;
- Services, HPAs and PDBs point at workloads that exist, on ports those
  pods declare; a StatefulSet's serviceName is a headless Service;
- a default-deny NetworkPolicy exists and every workload also has a
  policy of its own; a peer a policy picks by labels in its own namespace
  is a pod of the build;
- the gateway's grace period covers its preStop pause plus its drain;
  every game shard gets a stable id and an address to advertise;
- in an overlay, images carry a tag other than `latest`;
- in a build with PodMonitors (the dev overlay leaves them out), every
  long-running workload that declares a `metrics` port is scraped by a
  PodMonitor that selects its pods, on a port they declare, under the job
  name `fogblast-<component>` the alert rules and dashboards use;
- with FOGBLAST_BIN set to a built `fogblast`, every FOGBLAST_*, REDIS_URL,
  NATS_URL and DATABASE_URL a container sets is one its subcommand reads
  (from `fogblast SUBCOMMAND --help`), and every key of a ConfigMap given
  whole (envFrom) is read by at least one of the subcommands it goes to.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import yaml

# Secrets created outside kustomize (docs/operations.md, "Secrets").
EXTERNAL_SECRETS = {"fogblast-secrets"}
WORKLOADS = {"Deployment", "StatefulSet", "DaemonSet", "Job"}


def pod_spec(doc: dict) -> dict:
    return doc["spec"]["template"]["spec"]


def pod_labels(doc: dict) -> dict:
    return doc["spec"]["template"].get("metadata", {}).get("labels", {}) or {}


def selects(selector: dict, labels: dict) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def label_selector_matches(selector: dict, labels: dict) -> bool:
    """A full LabelSelector (matchLabels and matchExpressions) against labels."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr["key"], expr["operator"], expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and labels.get(key) in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def env_value(container: dict, name: str) -> str | None:
    for var in container.get("env", []) or []:
        if var.get("name") == name:
            return var.get("value")
    return None


def lint(name: str, docs: list[dict]) -> list[str]:
    problems: list[str] = []
    by_kind: dict[str, dict[str, dict]] = {}
    for doc in docs:
        by_kind.setdefault(doc["kind"], {})[doc["metadata"]["name"]] = doc
    workloads = [d for d in docs if d["kind"] in WORKLOADS]
    configmaps = by_kind.get("ConfigMap", {})
    secrets = by_kind.get("Secret", {})

    def check_ref(where: str, kind: str, ref_name: str, key: str | None) -> None:
        pool = configmaps if kind == "ConfigMap" else secrets
        if ref_name not in pool:
            if kind == "Secret" and ref_name in EXTERNAL_SECRETS:
                return
            problems.append(f"{where}: {kind} {ref_name!r} is not in the build")
            return
        obj = pool[ref_name]
        keys = set((obj.get("data") or {}).keys()) | set((obj.get("stringData") or {}).keys())
        if key is not None and key not in keys:
            problems.append(f"{where}: {kind} {ref_name!r} has no key {key!r}")

    for doc in workloads:
        wname = f"{doc['kind']}/{doc['metadata']['name']}"
        spec = pod_spec(doc)
        pod_sc = spec.get("securityContext", {}) or {}
        if spec.get("automountServiceAccountToken") is not False:
            problems.append(f"{wname}: automountServiceAccountToken must be false")
        for volume in spec.get("volumes", []) or []:
            if "configMap" in volume:
                check_ref(wname, "ConfigMap", volume["configMap"]["name"], None)
            if "secret" in volume:
                check_ref(wname, "Secret", volume["secret"]["secretName"], None)
        containers = (spec.get("initContainers") or []) + spec["containers"]
        for c in containers:
            cname = f"{wname} container {c['name']}"
            sc = c.get("securityContext", {}) or {}
            if not (sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot")) is True):
                problems.append(f"{cname}: runAsNonRoot must be true")
            seccomp = sc.get("seccompProfile", pod_sc.get("seccompProfile")) or {}
            if seccomp.get("type") != "RuntimeDefault":
                problems.append(f"{cname}: seccompProfile must be RuntimeDefault")
            if sc.get("readOnlyRootFilesystem") is not True:
                problems.append(f"{cname}: readOnlyRootFilesystem must be true")
            if sc.get("allowPrivilegeEscalation") is not False:
                problems.append(f"{cname}: allowPrivilegeEscalation must be false")
            if "ALL" not in ((sc.get("capabilities") or {}).get("drop") or []):
                problems.append(f"{cname}: capabilities must drop ALL")
            resources = c.get("resources", {}) or {}
            for field, kinds in (("requests", ("cpu", "memory")), ("limits", ("memory",))):
                for res in kinds:
                    if res not in (resources.get(field) or {}):
                        problems.append(f"{cname}: resources.{field}.{res} is missing")
            image = c.get("image", "")
            if name.startswith("overlays/"):
                tag = image.rsplit("/", 1)[-1].partition(":")[2]
                if not tag or tag == "latest":
                    problems.append(f"{cname}: image {image!r} needs a tag other than latest")
            for source in c.get("envFrom", []) or []:
                if "configMapRef" in source:
                    check_ref(cname, "ConfigMap", source["configMapRef"]["name"], None)
                if "secretRef" in source:
                    check_ref(cname, "Secret", source["secretRef"]["name"], None)
            for var in c.get("env", []) or []:
                ref = var.get("valueFrom") or {}
                if "configMapKeyRef" in ref:
                    check_ref(cname, "ConfigMap", ref["configMapKeyRef"]["name"], ref["configMapKeyRef"]["key"])
                if "secretKeyRef" in ref:
                    secret_ref = ref["secretKeyRef"]
                    # An optional key may be missing: the variable is then unset.
                    key = None if secret_ref.get("optional") is True else secret_ref["key"]
                    check_ref(cname, "Secret", secret_ref["name"], key)
            if doc["kind"] != "Job" and c in spec["containers"]:
                ports = {p.get("name") for p in c.get("ports", []) or []} | {
                    p["containerPort"] for p in c.get("ports", []) or []
                }
                for probe_name in ("livenessProbe", "readinessProbe"):
                    probe = c.get(probe_name)
                    if not probe:
                        problems.append(f"{cname}: {probe_name} is missing")
                        continue
                    for action in ("httpGet", "tcpSocket", "grpc"):
                        port = (probe.get(action) or {}).get("port")
                        if port is not None and port not in ports:
                            problems.append(f"{cname}: {probe_name} uses port {port!r}, not declared")

    # Services, HPAs, PDBs point at real workloads and ports.
    for svc in by_kind.get("Service", {}).values():
        selector = svc["spec"].get("selector") or {}
        targets = [w for w in workloads if w["kind"] != "Job" and selects(selector, pod_labels(w))]
        if not targets:
            problems.append(f"Service/{svc['metadata']['name']}: selects no workload")
            continue
        for port in svc["spec"].get("ports", []):
            target = port.get("targetPort", port["port"])
            declared = set()
            for w in targets:
                for c in pod_spec(w)["containers"]:
                    for p in c.get("ports", []) or []:
                        declared |= {p.get("name"), p["containerPort"]}
            if target not in declared:
                problems.append(f"Service/{svc['metadata']['name']}: targetPort {target!r} is on no selected pod")
    for hpa in by_kind.get("HorizontalPodAutoscaler", {}).values():
        ref = hpa["spec"]["scaleTargetRef"]
        if ref["name"] not in by_kind.get(ref["kind"], {}):
            problems.append(f"HorizontalPodAutoscaler/{hpa['metadata']['name']}: no {ref['kind']} {ref['name']!r}")
    for pdb in by_kind.get("PodDisruptionBudget", {}).values():
        selector = pdb["spec"]["selector"].get("matchLabels") or {}
        if not any(selects(selector, pod_labels(w)) for w in workloads):
            problems.append(f"PodDisruptionBudget/{pdb['metadata']['name']}: selects no workload")
    for sts in by_kind.get("StatefulSet", {}).values():
        svc = by_kind.get("Service", {}).get(sts["spec"].get("serviceName"))
        if svc is None or svc["spec"].get("clusterIP") != "None":
            problems.append(f"StatefulSet/{sts['metadata']['name']}: serviceName is not a headless Service")

    # Network policies: deny by default, then one policy per workload.
    policies = list(by_kind.get("NetworkPolicy", {}).values())
    default_deny = [
        p
        for p in policies
        if p["spec"].get("podSelector") in ({}, None)
        and set(p["spec"].get("policyTypes", [])) == {"Ingress", "Egress"}
        and not p["spec"].get("ingress")
        and not p["spec"].get("egress")
    ]
    if not default_deny:
        problems.append("no default-deny NetworkPolicy (empty podSelector, Ingress and Egress, no rules)")
    for w in workloads:
        labels = pod_labels(w)
        own = [
            p
            for p in policies
            if p["spec"].get("podSelector", {}).get("matchLabels")
            and selects(p["spec"]["podSelector"]["matchLabels"], labels)
        ]
        if not own:
            problems.append(f"{w['kind']}/{w['metadata']['name']}: no NetworkPolicy of its own")

    # A peer chosen by labels in the policy's own namespace (no
    # namespaceSelector) must be a pod of this build: a selector that
    # matches nothing silently blocks the flow.
    for p in policies:
        peers = [(r, "from") for rule in p["spec"].get("ingress") or [] for r in rule.get("from") or []]
        peers += [(r, "to") for rule in p["spec"].get("egress") or [] for r in rule.get("to") or []]
        for peer, direction in peers:
            if "podSelector" not in peer or "namespaceSelector" in peer:
                continue
            if not any(label_selector_matches(peer["podSelector"], pod_labels(w)) for w in workloads):
                problems.append(
                    f"NetworkPolicy/{p['metadata']['name']}: `{direction}` selector {peer['podSelector']} matches no pod"
                )

    # Fogblast specifics.
    for w in workloads:
        component = pod_labels(w).get("app.kubernetes.io/component")
        spec = pod_spec(w)
        container = spec["containers"][0]
        if component == "gateway":
            drain_ms = int(env_value(container, "FOGBLAST_GATEWAY_DRAIN_MS") or 10_000)
            pause = ((container.get("lifecycle") or {}).get("preStop") or {}).get("sleep", {}).get("seconds", 0)
            grace = spec.get("terminationGracePeriodSeconds", 30)
            if grace < pause + drain_ms / 1000 + 5:
                problems.append(
                    f"{w['kind']}/{w['metadata']['name']}: terminationGracePeriodSeconds {grace} does not cover "
                    f"preStop {pause} s + drain {drain_ms / 1000:g} s + 5 s"
                )
        if component == "game":
            if w["kind"] != "StatefulSet":
                problems.append(f"{w['kind']}/{w['metadata']['name']}: game shards run as a StatefulSet")
            for var in ("FOGBLAST_GAME_SHARD_ID", "FOGBLAST_GAME_ADVERTISE"):
                if not env_value(container, var):
                    problems.append(f"{w['kind']}/{w['metadata']['name']}: {var} is not set")
    problems += monitor_problems(docs, workloads)
    return problems


def monitor_problems(docs: list[dict], workloads: list[dict]) -> list[str]:
    """PodMonitors scrape every workload with a metrics port, by its job name."""
    problems = []
    monitors = [d for d in docs if d["kind"] == "PodMonitor"]
    for m in monitors:
        mname = f"PodMonitor/{m['metadata']['name']}"
        picked = [w for w in workloads if label_selector_matches(m["spec"]["selector"], pod_labels(w))]
        if not picked:
            problems.append(f"{mname}: selects no pod of the build")
        for endpoint in m["spec"].get("podMetricsEndpoints", []):
            for w in picked:
                ports = {p.get("name") for c in pod_spec(w)["containers"] for p in c.get("ports", []) or []}
                if endpoint.get("port") not in ports:
                    problems.append(f"{mname}: {w['kind']}/{w['metadata']['name']} declares no port {endpoint.get('port')!r}")
                component = pod_labels(w).get("app.kubernetes.io/component")
                jobs = [r.get("replacement") for r in endpoint.get("relabelings", []) if r.get("targetLabel") == "job"]
                if jobs != [f"fogblast-{component}"]:
                    problems.append(f"{mname}: scrapes {component} pods under job {jobs}, not fogblast-{component}")
    for w in workloads if monitors else []:
        if w["kind"] == "Job":
            continue
        ports = {p.get("name") for c in pod_spec(w)["containers"] for p in c.get("ports", []) or []}
        if "metrics" in ports and not any(
            label_selector_matches(m["spec"]["selector"], pod_labels(w)) for m in monitors
        ):
            problems.append(f"{w['kind']}/{w['metadata']['name']}: no PodMonitor scrapes its metrics port")
    return problems


def checked_name(var: str) -> bool:
    return var.startswith("FOGBLAST_") or var in ("REDIS_URL", "NATS_URL", "DATABASE_URL")


def env_of_command(binary: str, command: str, cache: dict[str, set[str]]) -> set[str]:
    """The environment variables `fogblast COMMAND` reads, from its --help."""
    if command not in cache:
        help_text = subprocess.run(
            [binary, command, "--help"], check=True, capture_output=True, text=True, timeout=30
        ).stdout
        cache[command] = set(re.findall(r"\benv: ([A-Z0-9_]+)", help_text))
    return cache[command]


def env_check(docs: list[dict], binary: str) -> list[str]:
    problems: list[str] = []
    cache: dict[str, set[str]] = {}
    configmaps = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ConfigMap"}
    readers: dict[str, set[str]] = {}
    for doc in docs:
        if doc["kind"] not in WORKLOADS:
            continue
        for c in pod_spec(doc)["containers"]:
            if "fogblast" not in c.get("image", "") or not c.get("args"):
                continue
            command = c["args"][0]
            reads = env_of_command(binary, command, cache)
            for var in c.get("env", []) or []:
                if checked_name(var["name"]) and var["name"] not in reads:
                    problems.append(
                        f"{doc['kind']}/{doc['metadata']['name']}: `fogblast {command}` reads no {var['name']}"
                    )
            for source in c.get("envFrom", []) or []:
                name = (source.get("configMapRef") or {}).get("name")
                if name in configmaps:
                    readers.setdefault(name, set()).update(reads)
    for name, reads in readers.items():
        for key in configmaps[name].get("data") or {}:
            if checked_name(key) and key not in reads:
                problems.append(f"ConfigMap/{name}: no fogblast command that gets it reads {key}")
    return problems


def main() -> int:
    name, path = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    problems = lint(name, docs)
    binary = os.environ.get("FOGBLAST_BIN")
    if binary:
        problems += env_check(docs, binary)
    for problem in problems:
        print(f"k8s/validate: {name}: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
