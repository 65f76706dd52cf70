// Converts Swagger 2.0 documents to OpenAPI 3.0 with npm swagger2openapi (7.0.8, installed by
// scripts/install-test-peers beside AutoRest's test server), for the cross-check of our own
// conversion (toolkit-http/tests/http/swagger_cross_check.rs).
//
// SWAGGER2OPENAPI_NPM=PREFIX node scripts/swagger2openapi-convert.mjs IN_DIR OUT_DIR
//
// Every `*.json` file of IN_DIR is converted with `convertObj`, in this one process: OUT_DIR/NAME
// gets the 3.0 document as JSON, or OUT_DIR/NAME.error the message of the error the conversion
// failed with. Exits non-zero only when it cannot do that (arguments, files), never for a
// document that does not convert.
import { createRequire } from 'node:module';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [inDir, outDir] = process.argv.slice(2);
const prefix = process.env.SWAGGER2OPENAPI_NPM;
if (!inDir || !outDir || !prefix) {
  console.error('usage: SWAGGER2OPENAPI_NPM=PREFIX node swagger2openapi-convert.mjs IN_DIR OUT_DIR');
  process.exit(2);
}
const require = createRequire(import.meta.url);
const converter = require(require.resolve('swagger2openapi', { paths: [prefix] }));
const { version } = require(require.resolve('swagger2openapi/package.json', { paths: [prefix] }));

// The options, each the CLI's flag of the same name:
// - `patch: true`: repair what the converter calls small errors (a path parameter without
//   `required: true`, a non-body parameter without `type`) rather than refuse the whole document,
//   as our reader takes such documents (none of the corpus needs it today).
// - `warnOnly: true`: what it cannot convert without loss (a `tsv` list, which 3.0 cannot write)
//   is marked with an `x-s2o-warning` where it is, instead of failing the whole document; without
//   it, url.json's one `tsv` list would leave its other operations uncompared. The cross-check
//   expects the difference of each mark.
// - `rbname: 'x-codegen-request-body-name'`: keep the body parameter's name where our conversion
//   keeps it, so that both read the body into a property of the same name (without it, theirs is
//   `body` wherever ours is the parameter's name).
// A fresh object per document: `convertObj` writes its state into it.
const options = () => ({ patch: true, warnOnly: true, rbname: 'x-codegen-request-body-name' });

mkdirSync(outDir, { recursive: true });
const names = readdirSync(inDir).filter((name) => name.endsWith('.json')).sort();
let converted = 0;
let failed = 0;
for (const name of names) {
  // Some of AutoRest's files start with a byte order mark, which JSON.parse refuses.
  const text = readFileSync(join(inDir, name), 'utf8').replace(/^\uFEFF/, '');
  let output;
  try {
    const result = await converter.convertObj(JSON.parse(text), options());
    output = JSON.stringify(result.openapi, null, 2);
  } catch (error) {
    failed += 1;
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    writeFileSync(join(outDir, `${name}.error`), `${message}\n`);
    continue;
  }
  converted += 1;
  writeFileSync(join(outDir, name), `${output}\n`);
}
console.log(`swagger2openapi ${version}: ${converted} converted, ${failed} failed`);
