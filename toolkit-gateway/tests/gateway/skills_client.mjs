// A client of the TypeScript MCP SDK v2 (npm @modelcontextprotocol/client 2.4.0, its Skills
// extension: `SkillsClient`) that starts the stdio server COMMAND ARGS, lists its skills, and
// reads every file each entry lists, each verified by the SDK against the entry's size and digest
// (and the SKILL.md's frontmatter against the entry's). Prints one JSON line:
// {skills: [{uri, name, files: {uri: size}, verified}], capabilities}, or {error, reason, uri}
// and exits 1 (a `SkillVerificationError` names its reason and file).
// Usage: node skills_client.mjs COMMAND [ARG...]   (NODE_PATH: not read by ESM; run from a
// folder whose node_modules has the SDK, or give its path in SDK_MODULES)
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import path from "node:path";

const modules = process.env.SDK_MODULES;
const load = (name) =>
  import(pathToFileURL(createRequire(path.join(modules, "noop.js")).resolve(name)).href);

const [command, ...args] = process.argv.slice(2);
try {
  const { Client } = await load("@modelcontextprotocol/client");
  const { StdioClientTransport } = await load("@modelcontextprotocol/client/stdio");
  const { SkillsClient } = await load("@modelcontextprotocol/client/ext/skills");
  const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
  const client = new Client({ name: "skills-client", version: "1.0.0" }, { capabilities: {} });
  await client.connect(transport);
  const skills = new SkillsClient(client);
  const { skills: entries } = await skills.list();
  const out = [];
  for (const entry of entries) {
    const files = {};
    let verified = true;
    for (const file of entry.resources === "dynamic" ? [] : entry.resources) {
      const read = await skills.read(entry, file.uri);
      files[file.uri] = read.bytes.length;
      verified &&= read.verified;
    }
    out.push({ uri: entry.uri, name: entry.frontmatter.name, files, verified });
  }
  console.log(JSON.stringify({ skills: out, capabilities: client.getServerCapabilities() }));
  await client.close();
} catch (error) {
  console.log(JSON.stringify({ error: String(error), reason: error?.reason, uri: error?.uri }));
  process.exit(1);
}
