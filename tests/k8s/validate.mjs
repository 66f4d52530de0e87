// Validates each document of the YAML files given against Kubernetes'
// API schema: kubernetes-models' validators, compiled by ajv from the
// OpenAPI schema of the Kubernetes API (its apiVersion/kind picks one).
// Prints "ok KIND NAME" or "INVALID KIND NAME: why"; exits 1 on any
// invalid document, 2 on a kind it has no schema for.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

let bad = 0;
for (const file of process.argv.slice(2)) {
  for (const doc of parseAllDocuments(readFileSync(file, "utf8"))) {
    if (doc.errors.length) {
      console.log(`INVALID ${file}: ${doc.errors[0].message}`);
      bad = 1;
      continue;
    }
    const o = doc.toJS();
    if (o === null || o === undefined) continue;
    const api = String(o.apiVersion ?? "");
    const [group, version] = api.includes("/") ? api.split("/") : ["", api];
    const path = group ? `kubernetes-models/${group}/${version}/${o.kind}` : `kubernetes-models/${version}/${o.kind}`;
    let Model;
    try {
      const mod = await import(path);
      Model = mod[o.kind] ?? mod.default;
    } catch (e) {
      console.log(`UNKNOWN ${file}: ${api} ${o.kind}: no schema`);
      process.exit(2);
    }
    const what = `${o.kind} ${o.metadata?.name ?? "?"}`;
    try {
      new Model(o).validate();
      console.log(`ok ${what}`);
    } catch (e) {
      console.log(`INVALID ${what}: ${e.message}`);
      bad = 1;
    }
  }
}
process.exit(bad);
