"""Print action.yml's composite steps as a reusable workflow (`on: workflow_call` with the
action's inputs), so that actionlint — which lints workflows, not action metadata — checks
the action's steps, expressions and contexts too. Usage: python action-as-workflow.py action.yml"""
import sys

from ruamel.yaml import YAML

yaml = YAML()
with open(sys.argv[1]) as f:
    action = yaml.load(f)
inputs = {}
for name, spec in (action.get("inputs") or {}).items():
    default = spec.get("default")
    entry = {"type": "string", "required": False}
    # A workflow_call default cannot use the github context; the action's can.
    if default is not None and "${{" not in str(default):
        entry["default"] = str(default)
    inputs[name] = entry
workflow = {
    "name": "action.yml as a workflow",
    "on": {"workflow_call": {"inputs": inputs}},
    "jobs": {"action": {"runs-on": "ubuntu-latest", "steps": action["runs"]["steps"]}},
}
yaml.dump(workflow, sys.stdout)
