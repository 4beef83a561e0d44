#!/usr/bin/env python3
"""validate-records.py SCHEMA_DIR FILE...: validate bbench records (and
compare reports) against the JSON Schemas in SCHEMA_DIR (draft 2020-12).

Files that are not JSON objects naming a bbench schema are skipped (tests
also write hostile or partial files on purpose).  Prints one line per
invalid file; exit 0 if every record is valid, 1 otherwise."""
import json
import os
import sys

import jsonschema


def main(argv):
    schema_dir, files = argv[1], argv[2:]
    validators = {}
    for name in os.listdir(schema_dir):
        if name.endswith(".schema.json"):
            with open(os.path.join(schema_dir, name), encoding="utf-8") as f:
                schema = json.load(f)
            jsonschema.Draft202012Validator.check_schema(schema)
            validators[schema["title"]] = jsonschema.Draft202012Validator(schema)
    bad = checked = 0
    for path in files:
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError):
            continue
        if not isinstance(doc, dict) or doc.get("schema") not in validators:
            continue
        checked += 1
        errors = sorted(validators[doc["schema"]].iter_errors(doc), key=str)
        for e in errors[:5]:
            where = "/".join(str(p) for p in e.absolute_path)
            print(f"{path}: {where}: {e.message[:200]}")
        bad += bool(errors)
    print(f"schema: {checked} records checked, {bad} invalid")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
