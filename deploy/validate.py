#!/usr/bin/env python3
"""Validate deploy/*.yaml offline.

Built-in kinds (Deployment) go through kubernetes-validate (the Kubernetes
OpenAPI schemas, strict: unknown fields fail). Custom resources go through
the JSON Schemas in schemas/ (the fields of InferencePool, HTTPRoute and
LLMInferenceService that these manifests use, from their API references),
and an LLMInferenceService's template is also checked as a core/v1 PodSpec
by wrapping it in a Pod. Run through validate.sh, which makes the venv.
"""
import glob
import json
import os
import sys

import jsonschema
import kubernetes_validate
import yaml

here = os.path.dirname(os.path.abspath(__file__))
schemas = {
    "InferencePool": "inferencepool-v1.json",
    "HTTPRoute": "httproute-v1.json",
    "LLMInferenceService": "llminferenceservice-v1alpha1.json",
}
K8S = "1.33.0"
failed = 0
count = 0


def builtin(doc, where):
    kubernetes_validate.validate(doc, K8S, strict=True)


for path in sorted(glob.glob(os.path.join(here, "*.yaml"))):
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    for doc in docs:
        count += 1
        where = f"{os.path.basename(path)}: {doc.get('kind')}/{doc.get('metadata', {}).get('name')}"
        try:
            kind = doc.get("kind")
            if kind in schemas:
                with open(os.path.join(here, "schemas", schemas[kind])) as s:
                    jsonschema.validate(doc, json.load(s))
                if kind == "LLMInferenceService":
                    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "template"},
                           "spec": doc["spec"]["template"]}
                    builtin(pod, where)
            else:
                builtin(doc, where)
            print(f"ok    {where}")
        except Exception as e:  # a validation error of either kind
            failed += 1
            print(f"FAIL  {where}: {str(e).splitlines()[0]}")
print(f"{count} resources, {failed} invalid")
sys.exit(1 if failed or not count else 0)
