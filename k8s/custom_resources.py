"""Checks rendered custom resources against the CRDs vendored in k8s/crds
(the Prometheus Operator's PodMonitor and PrometheusRule), in strict mode
like the rest of k8s/validate: a field the schema does not declare is an
error, as it is for `kubectl apply --validate=strict`.

Run by k8s/validate on the documents of each build whose kind one of the
CRDs defines: `python custom_resources.py NAME FILE`. Prints one line per
problem and exits 1 if there is any; a document whose kind no vendored CRD
defines is a problem too.
"""

from __future__ import annotations

import glob
import os
import sys

import jsonschema
import yaml

CRDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "crds")


def strict(schema: dict) -> dict:
    """The schema with unknown fields refused wherever fields are declared."""
    if isinstance(schema, dict):
        schema = {k: strict(v) for k, v in schema.items()}
        if (
            schema.get("type") == "object"
            and "properties" in schema
            and "additionalProperties" not in schema
            and not schema.get("x-kubernetes-preserve-unknown-fields")
        ):
            schema["additionalProperties"] = False
    elif isinstance(schema, list):
        schema = [strict(v) for v in schema]
    return schema


def load_schemas() -> dict[tuple[str, str], dict]:
    """(apiVersion, kind) -> the strict JSON schema of that version."""
    schemas = {}
    for path in sorted(glob.glob(os.path.join(CRDS, "*.yaml"))):
        with open(path) as f:
            crd = yaml.safe_load(f)
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            schema = strict(version["schema"]["openAPIV3Schema"])
            # The API server checks metadata; a CRD's schema leaves it open.
            schema.setdefault("required", [])
            schema["required"] = sorted(set(schema["required"]) | {"apiVersion", "kind", "metadata"})
            schema["properties"]["metadata"] = {
                "type": "object",
                "required": ["name"],
                "properties": {"name": {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"}},
            }
            schemas[(f"{group}/{version['name']}", kind)] = schema
    return schemas


def check(name: str, docs: list[dict]) -> list[str]:
    schemas = load_schemas()
    problems = []
    for doc in docs:
        key = (doc.get("apiVersion"), doc.get("kind"))
        where = f"{name}: {doc.get('kind')}/{(doc.get('metadata') or {}).get('name')}"
        if key not in schemas:
            problems.append(f"{where}: no vendored CRD defines {key[0]} {key[1]}")
            continue
        validator = jsonschema.Draft7Validator(schemas[key])
        for error in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path)):
            path = ".".join(str(p) for p in error.absolute_path) or "(document)"
            problems.append(f"{where}: {path}: {error.message}")
    return problems


def main() -> int:
    name, path = sys.argv[1], sys.argv[2]
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    problems = check(name, docs)
    for problem in problems:
        print(f"k8s/validate: {problem}", file=sys.stderr)
    if not problems:
        print(f"k8s/validate: {name}: {len(docs)} custom resources valid (vendored CRDs, strict)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
