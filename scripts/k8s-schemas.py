#!/usr/bin/env python3
"""Write the standalone, strict JSON schemas kubeconform needs for the kinds
deploy/kubernetes/ uses, from the Kubernetes OpenAPI (v2) document, so CI
validates the manifests without network access.

    go mod download -json k8s.io/kubernetes@v1.31.4   # prints its Dir
    python3 scripts/k8s-schemas.py <Dir>/api/openapi-spec/swagger.json deploy/kubernetes/schemas

"Standalone": every $ref is inlined. "Strict": an object with properties
refuses others (additionalProperties: false), as kubectl's validation does.
The file names follow kubeconform's default {kind}-{group}-{version}.json
(lower case; the core group is left out).
"""
import json
import sys

KINDS = {  # definition name -> file name
    "io.k8s.api.apps.v1.Deployment": "deployment-apps-v1.json",
    "io.k8s.api.core.v1.Service": "service-v1.json",
    "io.k8s.api.core.v1.ConfigMap": "configmap-v1.json",
    "io.k8s.api.core.v1.Secret": "secret-v1.json",
    "io.k8s.api.policy.v1.PodDisruptionBudget": "poddisruptionbudget-policy-v1.json",
    "io.k8s.api.core.v1.PersistentVolumeClaim": "persistentvolumeclaim-v1.json",
}


def inline(node, defs, seen):
    if isinstance(node, list):
        return [inline(v, defs, seen) for v in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        if name in seen:  # recursive types (JSONSchemaProps) are not in these kinds
            return {}
        return inline(defs[name], defs, seen | {name})
    if node.get("format") == "int-or-string":
        return {"oneOf": [{"type": "string"}, {"type": "integer"}]}
    out = {k: inline(v, defs, seen) for k, v in node.items()
           if k not in ("x-kubernetes-group-version-kind",)}
    if "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


def main():
    swagger, dest = sys.argv[1], sys.argv[2]
    defs = json.load(open(swagger))["definitions"]
    for name, filename in KINDS.items():
        schema = inline(defs[name], defs, {name})
        schema["$schema"] = "http://json-schema.org/schema#"
        with open(f"{dest}/{filename}", "w") as f:
            json.dump(schema, f, sort_keys=True, separators=(",", ":"))
            f.write("\n")


if __name__ == "__main__":
    main()
